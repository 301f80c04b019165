#!/usr/bin/env node
// The discovery_agent binary: runs the compiled agent (dist/agent/main.js, built by `npm run build`, which `npm install`
// runs through `prepare`) with plain node and the agent's small young generation (--max-semi-space-size=1: ~40 MB less
// RSS, decisions 16 and 118) and one V8 helper thread (--v8-pool-size=1: ≈ 3 MB less, decision 117). Signals pass to
// the agent; its exit code is ours.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../dist/agent/main.js', import.meta.url));
if (!fs.existsSync(main)) {
  console.error(
    `discovery_agent: ${main} is missing; run \`npm run build\` in ${fileURLToPath(new URL('..', import.meta.url))}`,
  );
  process.exit(1);
}
const child = spawn(
  process.execPath,
  ['--max-semi-space-size=1', '--v8-pool-size=1', '--enable-source-maps', main, ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    cwd: process.cwd(),
  },
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
