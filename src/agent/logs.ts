/**
 * The agent's log files: the tail of the current log, and downloads of one of the agent's own files from the log
 * folder. The folder is shared with the monitor service, so a name must start with the agent's service name
 * (`agent.log`, `agent-20261124-0000-1.log.gz`): the monitor's `monitor*.log*` are not served (docs/security.md §17).
 * A name is accepted only when it is a bare file name of the expected form — `<service>[-_.<rest>].log` or
 * `….log.gz` with <rest> of [A-Za-z0-9._-] — so no separator, `..`, NUL, encoded or absolute path can pass; the
 * resolved path is then checked to sit directly in the folder, and symlinks are refused (O_NOFOLLOW, fstat).
 * Wrong form → 400; absent → 404. A download is a snapshot of the size at open: exactly that many bytes are sent,
 * however much the log grows meanwhile (the announced Content-Length always holds, so keep-alive stays in step).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { AppError } from '../core/errors.js';

export const MAX_TAIL_BYTES = 10 * 1024 * 1024;

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
  /** Opens a downloadable file; `kind` picks the accepted form. The stream gives exactly `size` bytes. */
  open(filename: string, kind: 'log' | 'gz'): { stream: Readable; size: number };
  list(): string[];
}

/** `service` is the service's name (`agent`): a plain word, the prefix of its log files. */
export function createLogFiles(opts: { logDir: string; currentFile: string; service: string }): LogFiles {
  const dir = path.resolve(opts.logDir);
  const name = `${opts.service}(?:[-_.][A-Za-z0-9._-]{0,200})?`;
  const LOG_RE = new RegExp(`^${name}\\.log$`);
  const GZ_RE = new RegExp(`^${name}\\.log\\.gz$`);
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
    open(filename, kind) {
      const re = kind === 'log' ? LOG_RE : GZ_RE;
      if (typeof filename !== 'string' || !re.test(filename) || filename.includes('..')) {
        throw AppError.badRequest(
          `filename must be one of this service's log files: ${opts.service}[-<suffix>]${kind === 'log' ? '.log' : '.log.gz'}`,
          'params.filename',
        );
      }
      const full = path.resolve(dir, filename);
      if (path.dirname(full) !== dir)
        throw AppError.badRequest('filename must name a file in the log folder', 'params.filename');
      let fd: number;
      try {
        fd = fs.openSync(full, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      } catch {
        throw AppError.notFound(`no log file ${filename}`);
      }
      const st = fs.fstatSync(fd);
      if (!st.isFile()) {
        fs.closeSync(fd);
        throw AppError.notFound(`no log file ${filename}`);
      }
      if (st.size === 0) {
        fs.closeSync(fd);
        return { stream: Readable.from([]), size: 0 };
      }
      // `end` is inclusive: bytes 0 … size-1 of the file as it was when opened, whatever is appended meanwhile.
      return { stream: fs.createReadStream('', { fd, start: 0, end: st.size - 1 }), size: st.size };
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
