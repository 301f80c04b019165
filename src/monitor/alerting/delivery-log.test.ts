/**
 * The delivery log's cap in a cluster, on a real PostgreSQL store (two store objects standing for two members, each
 * with its own delivery queue): the outcomes both members append are counted together, so the shared log is pruned
 * to its cap, where each member's own count stayed under it (decision 156); and a member pruning on a count read before
 * another member pruned does not cut the log below its cap.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Alert } from '../../core/notify/channel.js';
import { createChannelRegistry } from '../../core/notify/registry.js';
import type { PostgresStore } from '../../core/storage/postgres-store.js';
import { reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import type { BatchOp } from '../../core/storage/kv-store.js';
import { DELIVERY_BUCKET, QUEUE_BUCKET, type DeliveryQueue, createDeliveryQueue } from './delivery-queue.js';
import { pruneIfOver, recountAndPrune } from './delivery-log.js';
import { createQueueState } from './delivery-state.js';
import type { DeliveryQueueOptions } from './delivery-types.js';
import { pgAlertingKit, silentLog as log, sleep } from './pg-alerting.kit.js';
import { createWriteBuffer } from './write-buffer.js';

const LOG_MAX = 10;
const kit = await pgAlertingKit('dlog');

if (kit instanceof Error) {
  reportUnavailable(`PostgreSQL not usable: ${kit.message}`);
} else {
  describe('the delivery log in a cluster', () => {
    const options = (store: PostgresStore, id: string): DeliveryQueueOptions => ({
      store,
      writes: createWriteBuffer(store, log),
      log,
      channels: createChannelRegistry({ agent: kit.tls.agent, timeoutMs: 5000 }),
      getSettings: () => ({ enabled: 'true', url: `${kit.hook.url}/log` }),
      deliveryLogMax: LOG_MAX,
      cluster: { owner: id, ttlMs: 2000, sweepMs: 200 },
    });
    const member = (store: PostgresStore, id: string): DeliveryQueue => createDeliveryQueue(options(store, id));
    const alert = (monitor: string): Alert => ({
      kind: 'problem',
      monitor: { name: monitor, type: 'tcp' },
      status: 'DOWN',
      timestampMs: Date.now(),
    });

    it("two members' outcomes count together: the shared log is pruned to its cap", async () => {
      const a = member(kit.store, 'a');
      const peer = await kit.peer();
      const b = member(peer, 'b');
      await a.start();
      await b.start();
      // 8 outcomes each: under 1.1 × 10 for either member's own count, 16 in the shared log.
      for (let i = 0; i < 8; i++) {
        await a.enqueue('webhook', alert(`a${i}`));
        await b.enqueue('webhook', alert(`b${i}`));
      }
      await kit.hook.waitFor(16);
      // Every outcome is in the log once the queue is empty (an item's removal and its outcome are one batch); a
      // count read before that (16 sent, 4 logged) proves nothing.
      for (let i = 0; i < 100 && (await kit.store.bucket(QUEUE_BUCKET).count()) > 0; i++) await sleep(100);
      assert.equal(await kit.store.bucket(QUEUE_BUCKET).count(), 0, 'every delivery finished');
      // The sweeps (every 200 ms) recount the shared log and prune it once it passes 1.1 × max; each member's own
      // count (8) never does, so without the shared recount the log keeps all 16.
      const within = (n: number) => n >= LOG_MAX && n <= LOG_MAX * 1.1;
      let count = await kit.store.bucket(DELIVERY_BUCKET).count();
      for (let i = 0; i < 50 && !within(count); i++) {
        await sleep(100);
        count = await kit.store.bucket(DELIVERY_BUCKET).count();
      }
      assert.ok(within(count), `the shared log is pruned to deliveryLogMax (${LOG_MAX}..${LOG_MAX * 1.1}): ${count}`);
      const kept = await a.deliveries(100);
      assert.equal(kept.length, count);
      await a.stop();
      await b.stop();
    });

    it('a member pruning on a count read before another member pruned still keeps the newest max', async () => {
      const deliveries = kit.store.bucket(DELIVERY_BUCKET);
      const clear: BatchOp[] = [];
      for await (const e of deliveries.range()) clear.push({ type: 'delete', bucket: DELIVERY_BUCKET, key: e.key });
      await kit.store.batch(clear);
      const record = (i: number): BatchOp => ({
        type: 'put',
        bucket: DELIVERY_BUCKET,
        key: [1_000 + i, `r${i}`],
        value: { id: `r${i}`, channel: 'webhook', outcome: 'delivered', finishedMs: 1_000 + i },
      });
      await kit.store.batch(Array.from({ length: 16 }, (_, i) => record(i)));
      const a = createQueueState(options(kit.store, 'a'));
      const b = createQueueState(options(await kit.peer(), 'b'));
      // Both sweeps count 16; a prunes first, then b acts on its count (16) after a's deletes landed. Pruning "the
      // oldest count − max" made b delete 6 more (4 left); keeping the newest max leaves b nothing to delete.
      b.logCount = await b.o.store.bucket(DELIVERY_BUCKET).count();
      await recountAndPrune(a);
      await a.o.writes.drain();
      await pruneIfOver(b);
      await b.o.writes.drain();
      const kept: string[] = [];
      for await (const e of deliveries.range<{ id: string }>()) kept.push(e.value.id);
      assert.deepEqual(
        kept,
        Array.from({ length: LOG_MAX }, (_, i) => `r${i + 6}`),
      );
    });
  });
}
