/**
 * Compiles src/ to dist/ once per test process (`tsc -p tsconfig.build.json`, incremental: a few seconds when dist is
 * current), for tests that run the shipped build (`npm start`, `node dist/...`) rather than the TypeScript.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let built = false;

export function ensureBuilt(): void {
  if (built) return;
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`build failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  built = true;
}
