/**
 * Low-level /proc readers shared by every system module. Reads are synchronous on purpose: /proc files are generated
 * in memory by the kernel, so a synchronous open/read/close costs a few microseconds, while the thread-pool round trip
 * of the async API costs more CPU than the read itself. One reusable buffer per reader avoids per-file allocations.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** Clock ticks per second (USER_HZ). 100 on every Linux architecture Node supports. */
export const CLK_TCK = 100;
/** Memory page size. 4096 on x86_64 and the usual arm64 kernels. */
export const PAGE_SIZE_BYTES = 4096;

export interface ProcReader {
  /** The file as text, or undefined when it doesn't exist / can't be read (the process vanished, no permission). */
  read(path: string): string | undefined;
}

export function createProcReader(initialBytes = 64 * 1024): ProcReader {
  let buf = Buffer.allocUnsafe(initialBytes);
  return {
    read(path: string): string | undefined {
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch {
        return undefined;
      }
      try {
        let len = 0;
        for (;;) {
          if (len === buf.length) {
            const bigger = Buffer.allocUnsafe(buf.length * 2);
            buf.copy(bigger, 0, 0, len);
            buf = bigger;
          }
          const n = readSync(fd, buf, len, buf.length - len, null);
          if (n <= 0) break;
          len += n;
        }
        return buf.toString('utf8', 0, len);
      } catch {
        return undefined;
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** Reads a whole /proc file once (for callers that don't keep a reader). */
export function readProc(path: string): string | undefined {
  return createProcReader(16 * 1024).read(path);
}

/** Rate per second between two counter samples; 0 on counter reset or a zero interval. */
export function ratePerS(prev: number | undefined, cur: number, elapsedMs: number): number {
  if (prev === undefined || elapsedMs <= 0 || cur < prev) return 0;
  return ((cur - prev) * 1000) / elapsedMs;
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
