#!/usr/bin/env node
// The discovery_agent binary: runs src/agent/main.ts through tsx's loader, with the agent's small young generation
// (--max-semi-space-size=2: ~40 MB less RSS, docs/decisions.md). Signals pass to the agent; its exit code is ours.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../src/agent/main.ts', import.meta.url));
const tsx = import.meta.resolve('tsx');
const child = spawn(process.execPath, ['--max-semi-space-size=2', '--import', tsx, main, ...process.argv.slice(2)], {
  stdio: 'inherit',
  cwd: process.cwd(),
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
