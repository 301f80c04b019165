/**
 * Coalesces store writes: callers hand over operations synchronously (O(1), no await) and get a promise that
 * resolves once they are durable. Pending operations are written as one atomic `batch` per flush, flushes run one at
 * a time in submission order, so two writes of the same key land in the order they were made.
 * In a cluster a write may carry its shard lease's fence (claims.ts): the operations of one fence are batched under it
 * and the others apart, so a stale fence (the shard has a newer holder) refuses only its own operations.
 */
import type { Logger } from 'pino';
import { type Fence, isStaleFence } from '../../core/storage/claims.js';
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';

export interface WriteBuffer {
  write(ops: BatchOp[], fence?: Fence): Promise<void>;
  /** Resolves when everything submitted so far is written. */
  drain(): Promise<void>;
}

interface Group {
  ops: BatchOp[];
  fence?: Fence;
  waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }>;
}

export function createWriteBuffer(store: KvStore, log: Logger): WriteBuffer {
  // Groups in submission order, by fence ('' = none); a store without fences only ever has the one group.
  let pending = new Map<string, Group>();
  let running: Promise<void> | undefined;

  const writeGroup = async (g: Group): Promise<void> => {
    try {
      await store.batch(g.ops, g.fence ? { fences: [g.fence] } : undefined);
      for (const w of g.waiters) w.resolve();
    } catch (err) {
      if (isStaleFence(err)) log.warn({ fence: g.fence, ops: g.ops.length }, 'alerting: write refused, lease lost');
      else log.error({ err, ops: g.ops.length }, 'alerting: store write failed');
      for (const w of g.waiters) w.reject(err);
    }
  };

  const flush = async (): Promise<void> => {
    while (pending.size > 0) {
      const groups = pending;
      pending = new Map();
      for (const g of groups.values()) await writeGroup(g);
    }
    running = undefined;
  };

  return {
    write(ops, fence) {
      if (ops.length === 0) return Promise.resolve();
      const id = fence ? `${fence.key}\u0000${fence.epoch}` : '';
      let g = pending.get(id);
      if (!g) pending.set(id, (g = { ops: [], fence, waiters: [] }));
      const group = g;
      const p = new Promise<void>((resolve, reject) => {
        for (const op of ops) group.ops.push(op);
        group.waiters.push({ resolve, reject });
      });
      running ??= new Promise<void>((r) => setImmediate(r)).then(flush);
      return p;
    },
    async drain() {
      while (running) await running;
    },
  };
}
