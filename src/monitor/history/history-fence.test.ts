/**
 * Fenced history writes on PostgreSQL (history-fence.ts, docs/cluster.md "History"): a shard's lease taken by another
 * member (its epoch stamped) between the append and the flush — the stale shard's rows, extras, transitions and
 * latest status are not in the store, the held shard's are; the held set's compaction is fenced too; rows of an
 * older epoch of a shard this member won again are dropped; a result recorded without a lease is written unfenced.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Fence } from '../../core/storage/claims.js';
import { openPostgresStore, type PostgresStore } from '../../core/storage/postgres-store.js';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import { createHistoryService, type HistoryService } from './history.service.js';
import { decodeWalRecord, WAL_BUCKET } from './history-wal.js';
import { clusterHistoryOptions } from './history.kit.js';
import { HOUR_MS } from '../../core/time.js';

const H = Date.UTC(2026, 0, 10, 12);
const MIN = 60_000;
const P: Fence = { key: 'shard:*:1', epoch: 1 };
const Q: Fence = { key: 'shard:*:2', epoch: 1 };

const db = await createTestDatabase('hist_fence');
if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  let n = 0;
  const clock = { now: H + 30 * MIN };
  const open: Array<{ store: PostgresStore; history: HistoryService }> = [];
  /** An instance holding `leases` (monitor name → fence); `fenced` counts the rows it dropped. */
  const start = async (namespace: string, leases: Map<string, Fence>) => {
    const store = await openPostgresStore({ url: db.url, namespace });
    const fenced = { rows: 0 };
    const history = await createHistoryService({
      ...clusterHistoryOptions(store, clock, new Set(leases.keys())),
      fenceOf: (_db, name) => leases.get(name),
      onFenced: (rows) => void (fenced.rows += rows),
    });
    open.push({ store, history });
    return { store, history, fenced };
  };
  after(async () => {
    for (const i of open) {
      await i.history.close().catch(() => undefined);
      await i.store.close().catch(() => undefined);
    }
  });
  /** Another member won the shard: it stamps the newer epoch (alert-shards.ts does so on every win). */
  const stamp = (store: PostgresStore, f: Fence) => store.batch([], { fences: [f] });
  const walNames = async (store: PostgresStore) => {
    const names: string[] = [];
    for await (const e of store.bucket(WAL_BUCKET).range<Uint8Array>())
      for (const r of decodeWalRecord(e.value)) names.push(r.name);
    return names.sort();
  };
  const stored = async (store: PostgresStore, bucket: string, name: string) => {
    let rows = 0;
    for await (const e of store.bucket(bucket).range({ start: ['url', name], end: ['url', name, Infinity] }))
      if (e) rows++;
    return rows + ((await store.bucket(bucket).get(['url', name])) === undefined ? 0 : 1);
  };
  const down = (ts: number) => ({ ts, status: 'DOWN' as const, responseTimeMs: 0, message: `refused ${ts}` });

  describe('fenced history writes', () => {
    test('a shard taken between append and flush: its rows are dropped, the held shard is written', async () => {
      const ns = `hf${++n}`;
      clock.now = H + 30 * MIN;
      const a = await start(
        ns,
        new Map([
          ['p', P],
          ['q', Q],
        ]),
      );
      const peer = await openPostgresStore({ url: db.url, namespace: ns });
      try {
        for (let i = 0; i < 3; i++) {
          a.history.append('url', 'p', down(H + i * MIN), P);
          a.history.append('url', 'q', down(H + i * MIN), Q);
        }
        await stamp(peer, { key: P.key, epoch: 2 });
        await a.history.flush();
        assert.deepEqual(await walNames(peer), ['q', 'q', 'q'], 'only the held shard rows in the WAL');
        for (const bucket of ['hist.extra', 'hist.trans', 'hist.latest']) {
          assert.equal(await stored(peer, bucket, 'p'), 0, `no ${bucket} of the stale shard`);
          assert.ok((await stored(peer, bucket, 'q')) > 0, `${bucket} of the held shard`);
        }
        assert.equal(a.fenced.rows, 3, 'counted as fenced writes');
        assert.equal((await a.history.rows('url', 'p', H, H + HOUR_MS)).length, 0, 'gone from memory too');
        assert.equal(a.history.latest('url', 'p'), undefined);
        const late = await start(ns, new Map());
        assert.equal((await late.history.rows('url', 'p', H, H + HOUR_MS)).length, 0);
        assert.equal((await late.history.rows('url', 'q', H, H + HOUR_MS)).length, 3);
      } finally {
        await peer.close();
      }
    });

    test('the compaction of a closed hour is fenced by the lease held now', async () => {
      const ns = `hf${++n}`;
      clock.now = H + 30 * MIN;
      const leases = new Map([['p', P]]);
      const a = await start(ns, leases);
      const peer = await openPostgresStore({ url: db.url, namespace: ns });
      try {
        for (let i = 0; i < 3; i++) a.history.append('url', 'p', down(H + i * MIN), P);
        await a.history.flush(); // in the WAL, under epoch 1
        await stamp(peer, { key: P.key, epoch: 2 });
        clock.now = H + HOUR_MS + 20_000; // closed; A still believes it holds p (paused past its lease)
        await a.history.flush();
        assert.equal(await peer.bucket('hist.raw').get(['url', 'p', H]), undefined, 'no stale compaction');
      } finally {
        await peer.close();
      }
    });

    test('rows of an older epoch of a shard won again are dropped; a result without a lease is written', async () => {
      const ns = `hf${++n}`;
      clock.now = H + 30 * MIN;
      const a = await start(ns, new Map([['p', { ...P, epoch: 3 }]]));
      a.history.append('url', 'p', down(H + MIN), P);
      a.history.append('url', 'p', down(H + 2 * MIN), { ...P, epoch: 3 });
      a.history.append('url', 'r', down(H + 3 * MIN)); // run now on a member holding no lease for r
      await stamp(a.store, { key: P.key, epoch: 3 });
      await a.history.flush();
      const late = await start(ns, new Map());
      const p = await late.history.rows('url', 'p', H, H + HOUR_MS);
      assert.deepEqual(
        p.map((r) => r.ts),
        [H + 2 * MIN],
      );
      assert.equal((await late.history.rows('url', 'r', H, H + HOUR_MS)).length, 1);
      assert.equal(a.fenced.rows, 1);
    });
  });
}
