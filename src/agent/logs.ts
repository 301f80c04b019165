/**
 * The agent's log files: the tail of the current log, and downloads of one file from the log folder. A name is
 * accepted only when it is a bare file name of the expected form — `<name>.log` or `<name>.log.gz` with <name> of
 * [A-Za-z0-9._-] and no leading dot — so no separator, `..`, NUL, encoded or absolute path can pass; the resolved path
 * is then checked to sit directly in the folder, and symlinks are refused (lstat). Wrong form → 400; absent → 404.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../core/errors.js';

export const MAX_TAIL_BYTES = 10 * 1024 * 1024;
const NAME = '[A-Za-z0-9_-][A-Za-z0-9._-]{0,200}';
const LOG_RE = new RegExp(`^${NAME}\\.log$`);
const GZ_RE = new RegExp(`^${NAME}\\.log\\.gz$`);

/**
 * N of /partServerlogfile/{N}: a positive integer. N is clamped, not refused: beyond the file's size the whole file
 * comes back (tail() reads at most the size), and beyond MAX_TAIL_BYTES the last MAX_TAIL_BYTES (a memory bound).
 */
export function parseTailBytes(raw: string): number {
  const n = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw AppError.badRequest('bytes must be a positive integer', 'params.bytes');
  return Math.min(n, MAX_TAIL_BYTES);
}

export interface LogFiles {
  /** The last `bytes` bytes of the current log (fewer when the file is shorter). */
  tail(bytes: number): Buffer;
  /** Absolute path of a downloadable file; `kind` picks the accepted form. */
  resolve(filename: string, kind: 'log' | 'gz'): { path: string; size: number };
  list(): string[];
}

export function createLogFiles(opts: { logDir: string; currentFile: string }): LogFiles {
  const dir = path.resolve(opts.logDir);
  return {
    tail(bytes) {
      let fd: number;
      try {
        fd = fs.openSync(opts.currentFile, 'r');
      } catch {
        throw AppError.notFound('no current log file');
      }
      try {
        const size = fs.fstatSync(fd).size;
        const n = Math.min(bytes, size);
        const buf = Buffer.alloc(n);
        let off = 0;
        while (off < n) {
          const r = fs.readSync(fd, buf, off, n - off, size - n + off);
          if (r <= 0) break;
          off += r;
        }
        return buf.subarray(0, off);
      } finally {
        fs.closeSync(fd);
      }
    },
    resolve(filename, kind) {
      const re = kind === 'log' ? LOG_RE : GZ_RE;
      if (typeof filename !== 'string' || !re.test(filename) || filename.includes('..')) {
        throw AppError.badRequest(
          `filename must have the form <name>${kind === 'log' ? '.log' : '.log.gz'}`,
          'params.filename',
        );
      }
      const full = path.resolve(dir, filename);
      if (path.dirname(full) !== dir)
        throw AppError.badRequest('filename must name a file in the log folder', 'params.filename');
      let st: fs.Stats;
      try {
        st = fs.lstatSync(full);
      } catch {
        throw AppError.notFound(`no log file ${filename}`);
      }
      if (!st.isFile()) throw AppError.notFound(`no log file ${filename}`);
      return { path: full, size: st.size };
    },
    list() {
      try {
        return fs
          .readdirSync(dir)
          .filter((n) => LOG_RE.test(n) || GZ_RE.test(n))
          .sort();
      } catch {
        return [];
      }
    },
  };
}
