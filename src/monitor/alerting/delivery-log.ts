/**
 * The delivery log's cap (bucket 'alert_deliveries', `deliveryLogMax`, default 1,000): once the log holds more than
 * max · 1.1 entries the oldest are deleted down to max. Alone, the count is kept in memory (counted at start, one
 * more per outcome). In a cluster every member appends to the same log, so a member's own count misses the others'
 * outcomes: each sweep (every heartbeat) recounts the bucket in the store and prunes it (decision 156). A prune
 * deletes every entry older than the newest max it reads (not "the oldest count − max", which two members pruning at
 * once would each take, leaving max − excess): members pruning together each keep the newest max they saw, so the
 * log stays between max and max · 1.1 plus one heartbeat of outcomes.
 */
import type { BatchOp } from '../../core/storage/kv-store.js';
import type { QueueState } from './delivery-state.js';
import { DELIVERY_BUCKET } from './delivery-types.js';

/** Prunes when the known count passed max · 1.1. */
export async function pruneIfOver(s: QueueState): Promise<void> {
  if (s.logCount > s.logMax * 1.1) await prune(s);
}

/** Cluster: the log's count from the store (every member's outcomes), then the prune it calls for. */
export async function recountAndPrune(s: QueueState): Promise<void> {
  s.logCount = await s.o.store.bucket(DELIVERY_BUCKET).count();
  await pruneIfOver(s);
}

/** Drops every delivery log entry older than the newest logMax (one read, newest first). */
async function prune(s: QueueState): Promise<void> {
  if (s.logCount - s.logMax <= 0) return;
  const ops: BatchOp[] = [];
  let seen = 0;
  for await (const e of s.o.store.bucket(DELIVERY_BUCKET).range({ reverse: true }))
    if (++seen > s.logMax) ops.push({ type: 'delete', bucket: DELIVERY_BUCKET, key: e.key });
  s.logCount = seen - ops.length;
  await s.o.writes.write(ops);
}
