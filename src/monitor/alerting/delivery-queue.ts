/**
 * The persisted alert delivery queue. One lane per channel, each with its own concurrency: a slow or dead channel
 * only fills its own lane. `enqueue` is synchronous and O(1): the item goes into memory and into the write buffer
 * (bucket 'alert_queue'); a lane sends it only once it is durable, so a delete after delivery can never be overtaken
 * by the insert. Failures: a retryable ChannelError is retried with exponential backoff (base · 2^(attempt-1), capped,
 * ±20 % jitter) or after its Retry-After, which also pauses the whole lane (a rate limit is per endpoint); after
 * `maxAttempts` or a non-retryable error the item is recorded as failed. Every final outcome goes to the bounded
 * delivery log (bucket 'alert_deliveries'). `start()` reloads the queue: a restart loses no pending alert. Delivery is
 * at least once (a crash between a send and its delete sends again).
 * Order per monitor: within a lane, one monitor's alerts go out one at a time in the order they were queued — the next
 * waits until the one before is delivered or has failed for good (retries included), so a receiver never gets a
 * monitor's recovery before its problem (PagerDuty would keep the incident open). Different monitors still go out
 * in parallel up to the lane's concurrency.
 * In a cluster (`cluster` set) every member shares the queue in the store: a member delivers a monitor's alerts on a
 * channel only while it holds that lane key's claim (delivery-claims.ts), checked before every attempt; it claims the
 * keys of the alerts it queues and, every sweep, the unclaimed ones it finds (a dead member's, once expired), reading
 * their items from the store after the claim. `start()` then loads nothing directly: the first sweep does.
 *
 * Parts: delivery-lanes.ts (lanes, order per monitor), delivery-attempt.ts (sends, retries, outcomes, the log),
 * delivery-sweep.ts (a cluster's claims), delivery-state.ts (shared state), delivery-types.ts (public types).
 */
import { randomUUID } from 'node:crypto';
import type { Alert } from '../../core/notify/channel.js';
import type { BatchOp } from '../../core/storage/kv-store.js';
import { attempt } from './delivery-attempt.js';
import { admit, clearLanes, schedule } from './delivery-lanes.js';
import { type QueueState, createQueueState } from './delivery-state.js';
import { admitLocal, armSweep, sweep } from './delivery-sweep.js';
import {
  DELIVERY_BUCKET,
  type DeliveryQueue,
  type DeliveryQueueOptions,
  type DeliveryRecord,
  QUEUE_BUCKET,
  type QueueItem,
} from './delivery-types.js';

export {
  DELIVERY_BUCKET,
  QUEUE_BUCKET,
  type DeliveryQueue,
  type DeliveryQueueOptions,
  type DeliveryRecord,
  type QueueItem,
} from './delivery-types.js';

export function createDeliveryQueue(o: DeliveryQueueOptions): DeliveryQueue {
  const s = createQueueState(o);
  s.attempt = (lane, item) => attempt(s, lane, item);
  return {
    start: () => start(s),
    stop: () => stop(s),
    enqueue(channel, alert) {
      return this.enqueueWith([{ channel, alert }], []);
    },
    enqueueWith: (list, extraOps, fence) => enqueueWith(s, list, extraOps, fence),
    async deliveries(limit = 100) {
      const out: DeliveryRecord[] = [];
      for await (const e of o.store.bucket(DELIVERY_BUCKET).range<DeliveryRecord>({ reverse: true, limit }))
        out.push(e.value);
      return out;
    },
    pending() {
      const r: Record<string, number> = {};
      for (const l of s.lanes.values()) r[l.id] = l.ready.length - l.head + l.active;
      return r;
    },
    outcomes: () => ({ ...s.counts }),
    idle() {
      return s.outstanding === 0 ? Promise.resolve() : new Promise((r) => s.idleWaiters.push(r));
    },
  };
}

async function start(s: QueueState): Promise<void> {
  const { o } = s;
  s.stopping = new AbortController();
  s.logCount = await o.store.bucket(DELIVERY_BUCKET).count();
  if (s.keeper) {
    await sweep(s).catch((err: unknown) => o.log.warn({ err }, 'alerting: delivery sweep failed'));
    armSweep(s, o.cluster!.sweepMs);
    return;
  }
  const items: QueueItem[] = [];
  for await (const e of o.store.bucket(QUEUE_BUCKET).range<QueueItem>()) items.push(e.value);
  items.sort((a, b) => a.createdMs - b.createdMs);
  for (const item of items) admit(s, item);
  if (items.length) o.log.info({ pending: items.length }, 'alerting: reloaded queued alerts');
}

async function stop(s: QueueState): Promise<void> {
  s.stopping.abort();
  clearTimeout(s.sweepTimer);
  for (const t of s.timers) clearTimeout(t);
  s.timers.clear();
  clearLanes(s);
  s.outstanding = 0;
  for (const w of s.idleWaiters.splice(0)) w();
  await s.o.writes.drain();
  if (s.keeper) {
    s.admitted.clear();
    await s.keeper.releaseAll().catch((err: unknown) => s.log.warn({ err }, 'alerting: releasing claims failed'));
  }
}

function newItem(s: QueueState, channel: string, alert: Alert): { item: QueueItem; op: BatchOp } {
  const t = s.now();
  const item: QueueItem = {
    id: `${t.toString(36)}-${randomUUID()}`,
    channel,
    alert,
    attempts: 0,
    nextAttemptMs: t,
    createdMs: t,
  };
  return { item, op: { type: 'put', bucket: QUEUE_BUCKET, key: item.id, value: item } };
}

function enqueueWith(
  s: QueueState,
  list: Array<{ channel: string; alert: Alert }>,
  extraOps: BatchOp[],
  fence: Parameters<DeliveryQueue['enqueueWith']>[2],
): Promise<void> {
  const added = list.map((x) => newItem(s, x.channel, x.alert));
  const p = s.o.writes.write([...extraOps, ...added.map((a) => a.op)], fence);
  for (const { item } of added) {
    s.durable.set(item.id, p);
    if (s.keeper) admitLocal(s, item, p);
    else {
      s.outstanding++;
      schedule(s, item);
    }
  }
  return p;
}
