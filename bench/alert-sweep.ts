/**
 * A cluster's delivery sweep with a long queue, on PostgreSQL: QUEUED items (default 10,000) of MONITORS monitors
 * (1,000) on one channel wait in `alert_queue` (a channel down for long). Figures: (steady) the sweep of a member while
 * another live member holds every key — it reads the queue and claims nothing; (takeover) the sweep of a member that
 * finds every key free (the holder died) — it claims the keys and admits their items. Sends never finish (the channel
 * is a stand-in that hangs), so only the sweep is timed: the `start()` of a fresh queue runs exactly one.
 *
 * Run: npm run bench:alert-sweep   (PG_URL, QUEUED, MONITORS, ROUNDS override). Last line: one JSON object.
 */
import pino from 'pino';
import type { Alert } from '../src/core/notify/channel.js';
import type { ChannelRegistry } from '../src/core/notify/registry.js';
import type { BatchOp } from '../src/core/storage/kv-store.js';
import { dropPostgresNamespace, openPostgresStore } from '../src/core/storage/postgres-store.js';
import { createDeliveryQueue, QUEUE_BUCKET, type QueueItem } from '../src/monitor/alerting/delivery-queue.js';
import { createWriteBuffer } from '../src/monitor/alerting/write-buffer.js';

const url = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const QUEUED = Number(process.env.QUEUED ?? 10_000);
const MONITORS = Number(process.env.MONITORS ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const namespace = `b${Date.now().toString(36)}_${process.pid}_sweep`;
const log = pino({ level: 'silent' });
const hanging = { has: () => true, send: () => new Promise<void>(() => undefined) } as unknown as ChannelRegistry;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const store = await openPostgresStore({ url, namespace });
const keys = new Set<string>();
const ops: BatchOp[] = [];
for (let i = 0; i < QUEUED; i++) {
  const monitor = `m${i % MONITORS}`;
  const alert: Alert = {
    kind: 'problem',
    monitor: { name: monitor, type: 'url', displayName: `Monitor ${monitor}`, tags: ['prod', 'web'] },
    status: 'DOWN',
    message: 'connect ECONNREFUSED 10.0.0.1:443 (a typical failure message of some length)',
    timestampMs: 1_700_000_000_000 + i,
  };
  const t = 1_700_000_000_000 + i;
  const item: QueueItem = {
    id: `${t.toString(36)}-${i}`,
    channel: 'webhook',
    alert,
    attempts: 1,
    nextAttemptMs: t,
    createdMs: t,
  };
  keys.add(`webhook ${monitor}`);
  ops.push({ type: 'put', bucket: QUEUE_BUCKET, key: item.id, value: item });
}
for (let i = 0; i < ops.length; i += 1000) await store.batch(ops.slice(i, i + 1000));

const queue = () =>
  createDeliveryQueue({
    store,
    writes: createWriteBuffer(store, log),
    log,
    channels: hanging,
    getSettings: () => ({ url: 'https://127.0.0.1:9/x' }),
    cluster: { owner: 'me', ttlMs: 60_000, sweepMs: 1e9 },
  });
const timedSweep = async (): Promise<number> => {
  const q = queue();
  const t0 = performance.now();
  await q.start();
  const ms = performance.now() - t0;
  await q.stop();
  return ms;
};

const steady: number[] = [];
const takeover: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  await store.claims.claim([...keys], 'other', 60_000);
  steady.push(await timedSweep());
  await store.claims.release([...keys], 'other');
  takeover.push(await timedSweep()); // stop() releases what it claimed
}
await store.close();
await dropPostgresNamespace(url, namespace);
const out = {
  queued: QUEUED,
  monitors: MONITORS,
  rounds: ROUNDS,
  steadySweepMsMedian: Math.round(median(steady)),
  takeoverSweepMsMedian: Math.round(median(takeover)),
};
console.log(`steady sweep (every key held elsewhere): ${steady.map((x) => x.toFixed(0)).join(', ')} ms`);
console.log(`takeover sweep (every key free): ${takeover.map((x) => x.toFixed(0)).join(', ')} ms`);
console.log(JSON.stringify(out));
process.exit(0);
