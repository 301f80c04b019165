/**
 * Run artifacts (exec monitors' screenshots, video, HAR) live in `<DATA_DIR>/artifacts/<monitor>/<runTs>/<file>`.
 * Downloads resolve strictly inside that folder (no `..`, no absolute or encoded escapes, no symlinks out); a sweep
 * deletes run folders older than the raw-result retention (`dataRetention` hours), so artifacts live as long as the
 * runs that list them. A total cap (artifactMaxBytesTotal) deletes whole run folders, oldest first, after runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { resolveArtifactPath } from '../monitor-types/exec.js';

const NAME_RE = /^[A-Za-z0-9_.:@-]{1,128}$/;
const TS_RE = /^\d{1,16}$/;
const FILE_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.webm': 'video/webm',
  '.har': 'application/json',
  '.json': 'application/json',
  '.txt': 'text/plain',
};

export class ArtifactStore {
  constructor(
    readonly root: string,
    private readonly log: Logger,
  ) {}

  /** The artifact's real path and content type; 404 when it doesn't exist or lies outside the folder. */
  open(monitor: string, ts: string, file: string): { path: string; type: string; bytes: number } {
    if (!NAME_RE.test(monitor) || !TS_RE.test(ts) || !FILE_RE.test(file) || file.includes('..')) {
      throw AppError.notFound('no such artifact');
    }
    const full = resolveArtifactPath(this.root, `${monitor}/${ts}/${file}`);
    if (!full) throw AppError.notFound('no such artifact');
    let real: string;
    try {
      real = fs.realpathSync(full);
    } catch {
      throw AppError.notFound('no such artifact');
    }
    const rootReal = fs.existsSync(this.root) ? fs.realpathSync(this.root) : this.root;
    if (!real.startsWith(rootReal + path.sep)) throw AppError.notFound('no such artifact');
    const st = fs.statSync(real);
    if (!st.isFile()) throw AppError.notFound('no such artifact');
    return { path: real, type: TYPES[path.extname(file)] ?? 'application/octet-stream', bytes: st.size };
  }

  /** Deletes run folders older than `maxAgeMs`; resolves the number removed. */
  async sweep(maxAgeMs: number, nowMs = Date.now()): Promise<number> {
    if (!fs.existsSync(this.root)) return 0;
    let removed = 0;
    for (const monitor of await fs.promises.readdir(this.root)) {
      const dir = path.join(this.root, monitor);
      let runs: string[];
      try {
        runs = await fs.promises.readdir(dir);
      } catch {
        continue;
      }
      for (const ts of runs) {
        if (!TS_RE.test(ts) || nowMs - Number(ts) <= maxAgeMs) continue;
        await fs.promises.rm(path.join(dir, ts), { recursive: true, force: true });
        removed++;
      }
      if ((await fs.promises.readdir(dir).catch(() => ['x'])).length === 0)
        await fs.promises.rmdir(dir).catch(() => undefined);
    }
    if (removed) this.log.info({ removed }, 'old run artifacts deleted');
    return removed;
  }

  private chain: Promise<unknown> = Promise.resolve();

  /**
   * Called after each run that kept artifacts: when all run folders together pass `maxBytes`, deletes whole run
   * folders, oldest first, until they fit (setting artifactMaxBytesTotal). Serialised; resolves the number removed.
   */
  enforceTotal(maxBytes: number): Promise<number> {
    const next = this.chain.then(() => this.trimTo(maxBytes));
    this.chain = next.catch((e: unknown) => this.log.warn({ err: e }, 'artifact total cap failed'));
    return next;
  }

  private async trimTo(maxBytes: number): Promise<number> {
    if (!fs.existsSync(this.root)) return 0;
    const runs: { dir: string; ts: number; bytes: number }[] = [];
    for (const monitor of await fs.promises.readdir(this.root)) {
      const mdir = path.join(this.root, monitor);
      for (const ts of await fs.promises.readdir(mdir).catch(() => [] as string[])) {
        if (!TS_RE.test(ts)) continue;
        const dir = path.join(mdir, ts);
        let bytes = 0;
        for (const f of await fs.promises.readdir(dir).catch(() => [] as string[]))
          bytes += (await fs.promises.stat(path.join(dir, f)).catch(() => undefined))?.size ?? 0;
        runs.push({ dir, ts: Number(ts), bytes });
      }
    }
    let total = runs.reduce((a, r) => a + r.bytes, 0);
    let removed = 0;
    for (const r of runs.sort((a, b) => a.ts - b.ts)) {
      if (total <= maxBytes) break;
      await fs.promises.rm(r.dir, { recursive: true, force: true });
      total -= r.bytes;
      removed++;
    }
    if (removed) this.log.info({ removed, totalBytes: total, maxBytes }, 'oldest run artifacts deleted (total cap)');
    return removed;
  }

  async removeMonitor(monitor: string): Promise<void> {
    if (!NAME_RE.test(monitor)) return;
    await fs.promises.rm(path.join(this.root, monitor), { recursive: true, force: true });
  }
}
