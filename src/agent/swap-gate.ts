/**
 * The agent store's swap gate: reads of the discovery buckets run side by side, and a swap (/reinitDatabase drops
 * and recreates those buckets; a restore would replace them) runs alone. A swap waits for the reads in flight to
 * finish and holds back new ones; a read that arrives during a swap waits for it to end, or, past `waitMs`, answers
 * 503 UNAVAILABLE with Retry-After. Without it a read racing a drop got LMDB's "Invalid argument" (a 500).
 */
import { AppError } from '../core/errors.js';

export interface SwapGate {
  read<T>(fn: () => Promise<T>): Promise<T>;
  swap<T>(fn: () => Promise<T>): Promise<T>;
}

export function createSwapGate(opts: { waitMs?: number } = {}): SwapGate {
  const waitMs = opts.waitMs ?? 10_000;
  let readers = 0;
  let drained: (() => void) | undefined;
  /** Set from the moment a swap is queued until it ends. */
  let swapping: Promise<void> | undefined;
  let swapTail: Promise<unknown> = Promise.resolve();

  const waitForSwap = async (): Promise<void> => {
    const deadline = Date.now() + waitMs;
    while (swapping) {
      const left = deadline - Date.now();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        swapping.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, left)))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        throw new AppError('UNAVAILABLE', 'the agent store is being reinitialised; retry shortly', { retryAfterS: 1 });
      }
    }
  };

  return {
    async read(fn) {
      // Check and count in one synchronous step: a swap that starts after this sees the reader.
      while (swapping) await waitForSwap();
      readers++;
      try {
        return await fn();
      } finally {
        readers--;
        if (readers === 0) drained?.();
      }
    },
    swap(fn) {
      const run = swapTail.then(async () => {
        let end!: () => void;
        swapping = new Promise<void>((r) => (end = r));
        try {
          if (readers > 0) await new Promise<void>((r) => (drained = r));
          drained = undefined;
          return await fn();
        } finally {
          swapping = undefined;
          end();
        }
      });
      swapTail = run.catch(() => undefined);
      return run;
    },
  };
}
