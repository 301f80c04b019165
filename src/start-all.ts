/**
 * `npm start`: both services, each in its own process (a crash in one never takes the other down), sharing DATA_DIR.
 * Ctrl-C stops both. If one exits, the other is stopped and the exit code passed on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const tsx = path.join(here, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs');
const children: ChildProcess[] = [];
let exiting = false;

function stopAll(code: number): void {
  if (exiting) return;
  exiting = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  setTimeout(() => process.exit(code), 5000).unref();
  Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() =>
    process.exit(code),
  );
}

// Young-generation sizes measured per service (docs/decisions.md): the agent's small one saves ~40 MB RSS at no
// measurable CPU cost; the monitor's larger one promotes less per-check garbage (~12 % fewer CPU-seconds per check).
const NODE_FLAGS: Record<string, string[]> = {
  monitor: ['--max-semi-space-size=32'],
  agent: ['--max-semi-space-size=2'],
};
for (const svc of ['monitor', 'agent']) {
  const child = spawn(process.execPath, [...NODE_FLAGS[svc]!, tsx, path.join(here, svc, 'main.ts')], {
    stdio: 'inherit',
    env: process.env,
  });
  child.on('exit', (code) => stopAll(code ?? 1));
  children.push(child);
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));
