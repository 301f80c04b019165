/**
 * Compiles src/ to dist/ once per test process (`tsc -p tsconfig.build.json`, incremental: a few seconds when dist is
 * current), for tests that run the shipped build (`npm start`, `node dist/...`) rather than the TypeScript. Test files
 * run two at a time and several of them build: a lock file (node_modules/.cache/build.lock, holding the builder's
 * pid; a dead holder's lock is taken over) makes them build one after the other, so no process starts a dist/ file
 * another tsc is writing.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let built = false;

const LOCK = path.join(ROOT, 'node_modules', '.cache', 'build.lock');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Runs `fn` holding the build lock (waits for another live holder, up to 10 min). */
function withBuildLock<T>(fn: () => T): T {
  fs.mkdirSync(path.dirname(LOCK), { recursive: true });
  const waitUntilMs = Date.now() + 600_000;
  for (;;) {
    try {
      fs.writeFileSync(LOCK, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = Number(fs.readFileSync(LOCK, 'utf8') || 0);
      if (holder > 0 && !alive(holder)) fs.rmSync(LOCK, { force: true });
      else if (Date.now() > waitUntilMs) throw new Error(`build lock held by pid ${holder} for 10 min`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(LOCK, { force: true });
  }
}

export function ensureBuilt(): void {
  if (built) return;
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = withBuildLock(() =>
    spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, encoding: 'utf8', timeout: 600_000 }),
  );
  if (r.status !== 0) throw new Error(`build failed (${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
  built = true;
}
