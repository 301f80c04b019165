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
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Alert, ChannelError } from '../../core/notify/channel.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';
import { type Fence, isStaleFence } from '../../core/storage/claims.js';
import type { WriteBuffer } from './write-buffer.js';
import { ClaimKeeper, type DeliveryCluster } from './delivery-claims.js';

export const QUEUE_BUCKET = 'alert_queue';
export const DELIVERY_BUCKET = 'alert_deliveries';

export interface QueueItem {
  id: string;
  channel: string;
  alert: Alert;
  attempts: number;
  nextAttemptMs: number;
  createdMs: number;
  lastError?: string;
}

export interface DeliveryRecord {
  id: string;
  channel: string;
  kind: Alert['kind'];
  monitor: string;
  status: string;
  outcome: 'delivered' | 'failed';
  attempts: number;
  error?: string;
  createdMs: number;
  finishedMs: number;
}

export interface DeliveryQueueOptions {
  store: KvStore;
  writes: WriteBuffer;
  log: Logger;
  channels: ChannelRegistry;
  /** Decrypted settings of an enabled channel, undefined when it is disabled or not configured. */
  getSettings(channel: string): Record<string, string> | undefined;
  now?: () => number;
  /** Concurrent sends per channel (default 16), or per channel id. */
  concurrency?: number | Record<string, number>;
  maxAttempts?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  sendTimeoutMs?: number;
  /** Delivery log size (default 1000). */
  deliveryLogMax?: number;
  /** Set in a cluster: the queue is shared through claims (see the file comment). */
  cluster?: DeliveryCluster;
}

interface Lane {
  id: string;
  ready: QueueItem[];
  head: number;
  active: number;
  concurrency: number;
  pausedUntilMs: number;
  pauseTimer?: NodeJS.Timeout;
  /** Per monitor: its item being sent or retried; a later item of that monitor waits in `parked`. */
  holders: Map<string, QueueItem>;
  parked: Map<string, QueueItem[]>;
  /** Parked items whose turn has come: sent before `ready`. */
  resumed: QueueItem[];
}

export interface DeliveryQueue {
  start(): Promise<void>;
  stop(): Promise<void>;
  enqueue(channel: string, alert: Alert): Promise<void>;
  /** Queues several items with extra store operations in the same atomic batch (alert state), under `fence` when
   * given (a cluster's shard lease: refused, nothing is sent). Never awaits the network. */
  enqueueWith(items: Array<{ channel: string; alert: Alert }>, extraOps: BatchOp[], fence?: Fence): Promise<void>;
  deliveries(limit?: number): Promise<DeliveryRecord[]>;
  pending(): Record<string, number>;
  /** Final outcomes since start(). */
  outcomes(): { delivered: number; failed: number };
  /** Resolves when nothing is queued, waiting or in flight (tests, benches). */
  idle(): Promise<void>;
}

export function createDeliveryQueue(o: DeliveryQueueOptions): DeliveryQueue {
  const now = o.now ?? Date.now;
  const maxAttempts = o.maxAttempts ?? 8;
  const baseBackoffMs = o.baseBackoffMs ?? 5_000;
  const maxBackoffMs = o.maxBackoffMs ?? 10 * 60_000;
  const sendTimeoutMs = o.sendTimeoutMs ?? 15_000;
  const logMax = o.deliveryLogMax ?? 1_000;
  const lanes = new Map<string, Lane>();
  const timers = new Set<NodeJS.Timeout>();
  const durable = new Map<string, Promise<void>>();
  const inFlight = new Set<AbortController>();
  const counts = { delivered: 0, failed: 0 };
  let outstanding = 0;
  const idleWaiters: Array<() => void> = [];
  let stopping = new AbortController();
  let logCount = 0;
  const keeper = o.cluster ? new ClaimKeeper(o.store.claims, o.cluster, o.log) : undefined;
  /** Cluster: the hold generation each admitted item was admitted under, and the admitted items by id. */
  const gens = new WeakMap<QueueItem, number>();
  const admitted = new Map<string, QueueItem>();
  let sweepTimer: NodeJS.Timeout | undefined;
  const keyOf = (item: QueueItem): string => `${item.channel} ${item.alert.monitor.name}`;

  const laneFor = (id: string): Lane => {
    let lane = lanes.get(id);
    if (!lane) {
      const c = o.concurrency;
      const concurrency = typeof c === 'number' ? c : (c?.[id] ?? 16);
      lane = {
        id,
        ready: [],
        head: 0,
        active: 0,
        concurrency,
        pausedUntilMs: 0,
        holders: new Map(),
        parked: new Map(),
        resumed: [],
      };
      lanes.set(id, lane);
    }
    return lane;
  };

  const settle = (): void => {
    outstanding--;
    if (outstanding === 0) for (const w of idleWaiters.splice(0)) w();
  };

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(
      () => {
        timers.delete(t);
        fn();
      },
      Math.max(0, ms),
    );
    timers.add(t);
  };

  const schedule = (item: QueueItem): void => {
    const lane = laneFor(item.channel);
    const wait = item.nextAttemptMs - now();
    if (wait > 0) later(wait, () => makeReady(lane, item));
    else makeReady(lane, item);
  };

  const makeReady = (lane: Lane, item: QueueItem): void => {
    lane.ready.push(item);
    pump(lane);
  };

  const pump = (lane: Lane): void => {
    if (stopping.signal.aborted) return;
    const wait = lane.pausedUntilMs - now();
    if (wait > 0) {
      if (!lane.pauseTimer) {
        lane.pauseTimer = setTimeout(() => {
          lane.pauseTimer = undefined;
          pump(lane);
        }, wait);
      }
      return;
    }
    while (lane.active < lane.concurrency) {
      const item = lane.resumed.shift() ?? nextReady(lane);
      if (item === undefined) break;
      const key = item.alert.monitor.name;
      const holder = lane.holders.get(key);
      if (holder !== undefined && holder !== item) {
        // An earlier alert of this monitor is still being sent or retried: this one waits its turn.
        const waiting = lane.parked.get(key);
        if (waiting) waiting.push(item);
        else lane.parked.set(key, [item]);
        continue;
      }
      lane.holders.set(key, item);
      lane.active++;
      void attempt(lane, item).finally(() => {
        lane.active--;
        pump(lane);
      });
    }
  };

  const nextReady = (lane: Lane): QueueItem | undefined => {
    if (lane.head >= lane.ready.length) return undefined;
    const item = lane.ready[lane.head]!;
    lane.ready[lane.head++] = undefined as unknown as QueueItem;
    if (lane.head > 1024 && lane.head * 2 > lane.ready.length) {
      lane.ready = lane.ready.slice(lane.head);
      lane.head = 0;
    }
    return item;
  };

  /** An item is done for good: its monitor's next parked item (if any) is next in the lane. */
  const release = (item: QueueItem): void => {
    const lane = lanes.get(item.channel);
    const key = item.alert.monitor.name;
    if (!lane || lane.holders.get(key) !== item) return;
    lane.holders.delete(key);
    const waiting = lane.parked.get(key);
    const next = waiting?.shift();
    if (waiting?.length === 0) lane.parked.delete(key);
    if (next) lane.resumed.push(next);
  };

  const backoffMs = (attempts: number): number => {
    const raw = Math.min(maxBackoffMs, baseBackoffMs * 2 ** Math.max(0, attempts - 1));
    return Math.round(raw * (0.8 + Math.random() * 0.4));
  };

  const finish = async (item: QueueItem, outcome: DeliveryRecord['outcome'], error?: string): Promise<void> => {
    const finishedMs = now();
    const rec: DeliveryRecord = {
      id: item.id,
      channel: item.channel,
      kind: item.alert.kind,
      monitor: item.alert.monitor.name,
      status: item.alert.status,
      outcome,
      attempts: item.attempts,
      createdMs: item.createdMs,
      finishedMs,
      ...(error ? { error } : {}),
    };
    durable.delete(item.id);
    release(item);
    counts[outcome]++;
    logCount++;
    const removed = o.writes.write([
      { type: 'delete', bucket: QUEUE_BUCKET, key: item.id },
      { type: 'put', bucket: DELIVERY_BUCKET, key: [finishedMs, item.id], value: rec },
    ]);
    if (keeper) {
      admitted.delete(item.id);
      keeper.done(keyOf(item), gens.get(item), removed);
    }
    try {
      await removed;
      if (logCount > logMax * 1.1) await prune();
    } catch {
      /* logged by the write buffer */
    }
    const log = outcome === 'delivered' ? o.log.debug.bind(o.log) : o.log.warn.bind(o.log);
    log(
      { channel: item.channel, monitor: rec.monitor, kind: rec.kind, attempts: item.attempts, error },
      `alert ${outcome}`,
    );
    settle();
  };

  const prune = async (): Promise<void> => {
    const excess = logCount - logMax;
    if (excess <= 0) return;
    const ops: BatchOp[] = [];
    for await (const e of o.store.bucket(DELIVERY_BUCKET).range({ limit: excess }))
      ops.push({ type: 'delete', bucket: DELIVERY_BUCKET, key: e.key });
    logCount -= ops.length;
    await o.writes.write(ops);
  };

  /** Not sent here: its queuing was refused (stale fence), or (cluster) its claim lapsed or went to another member. */
  const abandon = (item: QueueItem): void => {
    durable.delete(item.id);
    release(item);
    if (keeper && admitted.get(item.id) === item) {
      admitted.delete(item.id);
      keeper.done(keyOf(item), gens.get(item), Promise.resolve());
    }
    settle();
  };

  const attempt = async (lane: Lane, item: QueueItem): Promise<void> => {
    const refused = await durable.get(item.id)?.then(
      () => false,
      (err: unknown) => isStaleFence(err),
    );
    if (stopping.signal.aborted) return;
    if (refused || (keeper && !keeper.valid(keyOf(item), gens.get(item)))) return abandon(item);
    const settings = o.getSettings(item.channel);
    if (!o.channels.has(item.channel) || !settings)
      return finish(item, 'failed', `channel ${item.channel} is disabled or not configured`);
    item.attempts++;
    // Per-attempt controller, aborted by its timeout or by stop() (no listeners piling up on a long-lived signal).
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), sendTimeoutMs);
    inFlight.add(ac);
    try {
      await o.channels.send(item.channel, item.alert, settings, { signal: ac.signal, log: o.log });
      return finish(item, 'delivered');
    } catch (err) {
      if (stopping.signal.aborted) return; // stays queued in the store, resent after restart
      const ce = err instanceof ChannelError ? err : undefined;
      if (!ce) o.log.error({ err, channel: item.channel }, 'alerting: channel bug');
      const message = ce?.message ?? 'internal error';
      if (!ce?.retryable || item.attempts >= maxAttempts) return finish(item, 'failed', message);
      // A claim that lapsed during the send: the item is another member's now; writing it back could resurrect it.
      if (keeper && !keeper.valid(keyOf(item), gens.get(item))) return abandon(item);
      const delay = ce.retryAfterMs ?? backoffMs(item.attempts);
      if (ce.retryAfterMs !== undefined) lane.pausedUntilMs = Math.max(lane.pausedUntilMs, now() + ce.retryAfterMs);
      item.nextAttemptMs = now() + delay;
      item.lastError = message;
      o.writes.write([{ type: 'put', bucket: QUEUE_BUCKET, key: item.id, value: item }]).catch(() => undefined);
      later(delay, () => makeReady(lane, item));
    } finally {
      clearTimeout(timer);
      inFlight.delete(ac);
    }
  };

  /** Cluster: reads the queued items of freshly claimed keys from the store and admits them, oldest first. */
  const admitClaimed = async (won: Map<string, number>): Promise<void> => {
    if (won.size === 0) return;
    const items: QueueItem[] = [];
    for await (const e of o.store.bucket(QUEUE_BUCKET).range<QueueItem>())
      if (won.has(keyOf(e.value)) && !admitted.has(e.value.id)) items.push(e.value);
    items.sort((a, b) => a.createdMs - b.createdMs);
    for (const item of items) {
      const key = keyOf(item);
      const gen = won.get(key)!;
      if (!keeper!.valid(key, gen)) continue;
      gens.set(item, gen);
      keeper!.add(key, gen);
      admitted.set(item.id, item);
      admit(item);
    }
    // A key claimed with nothing left to send (delivered meanwhile) is released at once.
    for (const [key, gen] of won) {
      keeper!.add(key, gen);
      keeper!.done(key, gen, Promise.resolve());
    }
  };

  /** Cluster: renews held claims, then claims and admits the queued items no live member holds. */
  const sweep = async (): Promise<void> => {
    await keeper!.renew();
    const free = new Set<string>();
    for await (const e of o.store.bucket(QUEUE_BUCKET).range<QueueItem>())
      if (!admitted.has(e.value.id) && keeper!.current(keyOf(e.value)) === undefined) free.add(keyOf(e.value));
    if (free.size) await admitClaimed(await keeper!.claim(free));
  };

  const armSweep = (delayMs: number): void => {
    if (stopping.signal.aborted) return;
    sweepTimer = setTimeout(() => {
      sweep()
        .catch((err: unknown) => o.log.warn({ err }, 'alerting: delivery sweep failed'))
        .finally(() => armSweep(o.cluster!.sweepMs));
    }, delayMs);
  };

  /** An item to send: the oldest item of each monitor goes first, even when it waits for a retry. */
  const admit = (item: QueueItem): void => {
    outstanding++;
    const lane = laneFor(item.channel);
    if (!lane.holders.has(item.alert.monitor.name)) lane.holders.set(item.alert.monitor.name, item);
    schedule(item);
  };

  /** Cluster: a queued item is sent here under the key's claim, held already or claimed once it is durable. */
  const admitLocal = (item: QueueItem, written: Promise<void>): void => {
    const key = keyOf(item);
    const gen = keeper!.current(key);
    if (gen !== undefined) {
      gens.set(item, gen);
      keeper!.add(key, gen);
      admitted.set(item.id, item);
      outstanding++;
      schedule(item);
      return;
    }
    void written
      .then(() => keeper!.claim([key]))
      .then(admitClaimed)
      .catch((err: unknown) => {
        if (!isStaleFence(err)) o.log.warn({ err }, 'alerting: claiming a delivery failed (a sweep retries)');
      })
      .finally(() => {
        if (!admitted.has(item.id)) durable.delete(item.id);
      });
  };

  const add = (channel: string, alert: Alert): { item: QueueItem; op: BatchOp } => {
    const t = now();
    const item: QueueItem = {
      id: `${t.toString(36)}-${randomUUID()}`,
      channel,
      alert,
      attempts: 0,
      nextAttemptMs: t,
      createdMs: t,
    };
    return { item, op: { type: 'put', bucket: QUEUE_BUCKET, key: item.id, value: item } };
  };

  return {
    async start() {
      stopping = new AbortController();
      logCount = await o.store.bucket(DELIVERY_BUCKET).count();
      if (keeper) {
        await sweep().catch((err: unknown) => o.log.warn({ err }, 'alerting: delivery sweep failed'));
        armSweep(o.cluster!.sweepMs);
        return;
      }
      const items: QueueItem[] = [];
      for await (const e of o.store.bucket(QUEUE_BUCKET).range<QueueItem>()) items.push(e.value);
      items.sort((a, b) => a.createdMs - b.createdMs);
      for (const item of items) admit(item);
      if (items.length) o.log.info({ pending: items.length }, 'alerting: reloaded queued alerts');
    },
    async stop() {
      stopping.abort();
      clearTimeout(sweepTimer);
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const lane of lanes.values()) {
        if (lane.pauseTimer) clearTimeout(lane.pauseTimer);
        lane.pauseTimer = undefined;
      }
      lanes.clear();
      outstanding = 0;
      for (const w of idleWaiters.splice(0)) w();
      await o.writes.drain();
      if (keeper) {
        admitted.clear();
        await keeper.releaseAll().catch((err: unknown) => o.log.warn({ err }, 'alerting: releasing claims failed'));
      }
    },
    enqueue(channel, alert) {
      return this.enqueueWith([{ channel, alert }], []);
    },
    enqueueWith(list, extraOps, fence) {
      const added = list.map((x) => add(x.channel, x.alert));
      const p = o.writes.write([...extraOps, ...added.map((a) => a.op)], fence);
      for (const { item } of added) {
        durable.set(item.id, p);
        if (keeper) admitLocal(item, p);
        else {
          outstanding++;
          schedule(item);
        }
      }
      return p;
    },
    async deliveries(limit = 100) {
      const out: DeliveryRecord[] = [];
      for await (const e of o.store.bucket(DELIVERY_BUCKET).range<DeliveryRecord>({ reverse: true, limit }))
        out.push(e.value);
      return out;
    },
    pending() {
      const r: Record<string, number> = {};
      for (const l of lanes.values()) r[l.id] = l.ready.length - l.head + l.active;
      return r;
    },
    outcomes: () => ({ ...counts }),
    idle() {
      return outstanding === 0 ? Promise.resolve() : new Promise((r) => idleWaiters.push(r));
    },
  };
}
