/**
 * Coalesces store writes: callers hand over operations synchronously (O(1), no await) and get a promise that
 * resolves once they are durable. Pending operations are written as one atomic `batch` per flush, flushes run one at
 * a time in submission order, so two writes of the same key land in the order they were made.
 */
import type { Logger } from 'pino';
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';

export interface WriteBuffer {
  write(ops: BatchOp[]): Promise<void>;
  /** Resolves when everything submitted so far is written. */
  drain(): Promise<void>;
}

export function createWriteBuffer(store: KvStore, log: Logger): WriteBuffer {
  let pending: BatchOp[] = [];
  let waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  let running: Promise<void> | undefined;

  const flush = async (): Promise<void> => {
    while (pending.length > 0) {
      const ops = pending;
      const ws = waiters;
      pending = [];
      waiters = [];
      try {
        await store.batch(ops);
        for (const w of ws) w.resolve();
      } catch (err) {
        log.error({ err, ops: ops.length }, 'alerting: store write failed');
        for (const w of ws) w.reject(err);
      }
    }
    running = undefined;
  };

  return {
    write(ops) {
      if (ops.length === 0) return Promise.resolve();
      const p = new Promise<void>((resolve, reject) => {
        pending.push(...ops);
        waiters.push({ resolve, reject });
      });
      running ??= new Promise<void>((r) => setImmediate(r)).then(flush);
      return p;
    },
    async drain() {
      while (running) await running;
    },
  };
}
