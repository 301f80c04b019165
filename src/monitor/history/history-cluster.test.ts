/**
 * The history in a cluster (docs/cluster.md "History"): several HistoryService objects, each on its own
 * PostgresStore (its own change feed) over one namespace, with an injected clock and injected ownership (`holds`):
 * two writers flushing in the same ms, a series handed over mid-hour, a killed writer's open hour, and a result
 * written on one instance seen (latest status, recent results, open-hour rows) on another.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openPostgresStore, type PostgresStore } from '../../core/storage/postgres-store.js';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import { createHistoryService, type HistoryService, type HistoryServiceOptions } from './history.service.js';
import { decodeChunk } from './result-codec.js';
import { decodeDayBlock, decodeRollup } from './rollup.js';
import { WAL_BUCKET } from './history-wal.js';
import type { RemoteLatest } from './history-follow.js';
import { clusterHistoryOptions } from './history.kit.js';
import { HOUR_MS } from '../../core/time.js';

const H = Date.UTC(2026, 0, 10, 12);
const MIN = 60_000;
const GRACE_MS = 10_000; // clusterHistoryOptions' closeGraceMs

interface Instance {
  store: PostgresStore;
  history: HistoryService;
  held: Set<string>;
  seen: RemoteLatest[];
  /** getMany calls per bucket made by this instance's history. */
  reads: Map<string, number>;
}

const db = await createTestDatabase('hist_cluster');
if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  let n = 0;
  const clock = { now: H };
  /** One namespace per test; instances of a test share it. */
  const cluster = () => {
    const namespace = `hc${++n}`;
    const open: Instance[] = [];
    const start = async (held: string[] = [], more: Partial<HistoryServiceOptions> = {}): Promise<Instance> => {
      const store = await openPostgresStore({ url: db.url, namespace });
      const reads = new Map<string, number>();
      const bucketOf = store.bucket.bind(store);
      store.bucket = (name: string) => {
        const b = bucketOf(name);
        const getMany = b.getMany.bind(b);
        b.getMany = (keys) => {
          reads.set(name, (reads.get(name) ?? 0) + 1);
          return getMany(keys);
        };
        return b;
      };
      const seen: RemoteLatest[] = [];
      const set = new Set(held);
      const history = await createHistoryService({
        ...clusterHistoryOptions(store, clock, set),
        onRemoteLatest: (l) => seen.push(l),
        ...more,
      });
      const inst = { store, history, held: set, seen, reads };
      open.push(inst);
      return inst;
    };
    const stop = async () => {
      for (const i of open) {
        await i.history.close().catch(() => undefined);
        await i.store.close().catch(() => undefined);
      }
    };
    return { start, stop };
  };
  const ok = (ts: number, resp = 1) => ({ ts, status: 'OK' as const, responseTimeMs: resp });
  const rawRows = async (store: PostgresStore, name: string, hour: number) => {
    const bytes = await store.bucket('hist.raw').get<Uint8Array>(['url', name, hour]);
    return bytes ? decodeChunk(hour, bytes) : [];
  };
  const hourRollup = async (store: PostgresStore, name: string, hour: number) => {
    const day = Math.floor(hour / (24 * HOUR_MS)) * 24 * HOUR_MS;
    const block = await store.bucket('hist.day').get<Uint8Array>(['url', name, day]);
    const bytes = block && decodeDayBlock(block).get((hour - day) / HOUR_MS);
    return bytes ? decodeRollup(bytes) : undefined;
  };
  const walKeys = async (store: PostgresStore) => {
    let keys = 0;
    for await (const e of store.bucket(WAL_BUCKET).range()) if (e) keys++;
    return keys;
  };

  describe('history in a cluster', () => {
    test('two writers flushing in the same ms lose nothing', async () => {
      const c = cluster();
      try {
        clock.now = H + 30 * MIN;
        const a = await c.start(['a']);
        const b = await c.start(['b']);
        for (let i = 0; i < 5; i++) a.history.append('url', 'a', ok(H + i * MIN, i));
        for (let i = 0; i < 5; i++) b.history.append('url', 'b', ok(H + i * MIN, 10 + i));
        await Promise.all([a.history.flush(), b.history.flush()]); // same clock ms, first record of each
        assert.equal(await walKeys(a.store), 2, 'one record per writer');
        const late = await c.start(); // replays every writer's records
        assert.equal((await late.history.rows('url', 'a', H, H + HOUR_MS)).length, 5);
        assert.equal((await late.history.rows('url', 'b', H, H + HOUR_MS)).length, 5);
        await a.history.sync();
        assert.equal((await a.history.rows('url', 'b', H, H + HOUR_MS)).length, 5, 'A follows B');
        clock.now = H + HOUR_MS + GRACE_MS + 1000;
        for (const i of [a, b, late]) await i.history.flush();
        assert.equal((await rawRows(a.store, 'a', H)).length, 5);
        assert.equal((await rawRows(a.store, 'b', H)).length, 5);
      } finally {
        await c.stop();
      }
    });

    test('closing an hour compacts many held series with one read of chunks and one of day blocks', async () => {
      const c = cluster();
      try {
        clock.now = H + 30 * MIN;
        const names = Array.from({ length: 40 }, (_, i) => `s${i}`);
        const a = await c.start(names);
        for (const n of names) for (let i = 0; i < 3; i++) a.history.append('url', n, ok(H + i * MIN, i));
        await a.history.flush();
        a.reads.clear();
        clock.now = H + HOUR_MS + GRACE_MS + 1000;
        await a.history.flush();
        // One round trip per bucket for the flush (it was two per series: 80 reads for 40 series).
        assert.equal(a.reads.get('hist.raw'), 1);
        assert.equal(a.reads.get('hist.day'), 1);
        for (const n of names) assert.equal((await rawRows(a.store, n, H)).length, 3, n);
        assert.equal((await hourRollup(a.store, 's7', H))?.count, 3);
      } finally {
        await c.stop();
      }
    });

    test('a series handed over mid-hour: every row once in the chunk, each result once in the rollup', async () => {
      const c = cluster();
      try {
        clock.now = H - HOUR_MS + 5 * MIN;
        const a = await c.start(['x']);
        const b = await c.start();
        for (let i = 0; i < 10; i++) a.history.append('url', 'x', ok(H - HOUR_MS + i * MIN));
        clock.now = H + GRACE_MS + 1000;
        await a.history.flush(); // the previous hour compacted by A
        assert.equal((await hourRollup(a.store, 'x', H - HOUR_MS))?.count, 10);
        for (let i = 0; i < 28; i++) a.history.append('url', 'x', ok(H + i * MIN, i));
        clock.now = H + 28 * MIN;
        await a.history.flush();
        await b.history.sync();
        a.history.append('url', 'x', ok(H + 28 * MIN, 28));
        a.history.append('url', 'x', { ts: H + 29 * MIN, status: 'DOWN', responseTimeMs: 0, message: 'refused' });
        // Handover at :30: A's lease is gone before its last two rows are flushed; B wins and reads what was written.
        a.held.delete('x');
        a.history.ownershipChanged();
        b.held.add('x');
        b.history.ownershipChanged();
        await b.history.sync();
        clock.now = H + 30 * MIN;
        await a.history.flush();
        for (let i = 30; i < 60; i++) b.history.append('url', 'x', ok(H + i * MIN, i));
        await b.history.flush();
        await b.history.sync();
        clock.now = H + HOUR_MS + GRACE_MS + 1000; // the hour closes: both flush, only B compacts
        await a.history.flush();
        await b.history.flush();
        await a.history.flush();
        const rows = await rawRows(a.store, 'x', H);
        assert.deepEqual(
          rows.map((r) => (r.ts - H) / MIN),
          Array.from({ length: 60 }, (_, i) => i),
          'each minute exactly once',
        );
        const roll = await hourRollup(a.store, 'x', H);
        assert.equal(roll?.count, 60, 'the hour rollup counts each result once');
        assert.equal(roll?.statusCounts[4], 1, 'the DOWN result');
        assert.equal((await hourRollup(a.store, 'x', H - HOUR_MS))?.count, 10, "A's earlier hour is kept");
        assert.equal((await a.history.hourRollups('url', 'x', H, H + HOUR_MS))[0]?.rollup.count, 60, 'read on A');
      } finally {
        await c.stop();
      }
    });

    test('rows the previous holder flushes after the hour was compacted are merged in by the holder', async () => {
      const c = cluster();
      try {
        clock.now = H + 10 * MIN;
        const a = await c.start(['y']);
        const b = await c.start();
        for (let i = 0; i < 50; i++) a.history.append('url', 'y', ok(H + i * MIN, i));
        await a.history.flush();
        a.history.append('url', 'y', ok(H + 50 * MIN, 50)); // recorded under the lease, flushed only much later
        a.held.delete('y');
        b.held.add('y');
        b.history.ownershipChanged();
        await b.history.sync();
        for (let i = 51; i < 60; i++) b.history.append('url', 'y', ok(H + i * MIN, i));
        clock.now = H + HOUR_MS + GRACE_MS + 1000;
        await b.history.flush();
        assert.equal((await rawRows(b.store, 'y', H)).length, 59, 'compacted without the row A still holds');
        await a.history.flush(); // A's late row goes to the WAL, never into a chunk of its own
        await b.history.sync();
        await b.history.flush();
        assert.equal((await rawRows(b.store, 'y', H)).length, 60, 'merged into the stored chunk');
        assert.equal((await hourRollup(b.store, 'y', H))?.count, 60, 'and counted once');
        await a.history.sync();
        assert.equal((await a.history.rows('url', 'y', H, H + HOUR_MS)).length, 60, 'A reads the whole hour');
      } finally {
        await c.stop();
      }
    });

    test("a killed writer's open-hour rows are compacted by the new holder, its records purged later", async () => {
      const c = cluster();
      try {
        clock.now = H + 5 * MIN;
        const b = await c.start();
        const a = await c.start(['k']);
        for (let i = 0; i <= 20; i++) a.history.append('url', 'k', ok(H + i * MIN, i));
        clock.now = H + 21 * MIN;
        await a.history.flush();
        a.history.append('url', 'k', ok(H + 21 * MIN, 21)); // never flushed: lost with the process
        await a.store.close(); // kill -9: no close(), no final flush
        b.held.add('k');
        b.history.ownershipChanged();
        await b.history.sync();
        for (let i = 25; i <= 40; i++) b.history.append('url', 'k', ok(H + i * MIN, i));
        clock.now = H + HOUR_MS + GRACE_MS + 1000;
        await b.history.flush();
        const rows = await rawRows(b.store, 'k', H);
        assert.equal(rows.length, 21 + 16, "A's flushed rows and B's");
        assert.equal((await hourRollup(b.store, 'k', H))?.count, 37);
        clock.now = H + 2 * HOUR_MS + GRACE_MS + 1000;
        await b.history.flush();
        assert.equal(await walKeys(b.store), 0, "the closed hour's records are dropped, the dead writer's too");
        assert.equal((await b.history.rows('url', 'k', H, H + HOUR_MS)).length, 37, 'read back from the chunk');
      } finally {
        await c.stop();
      }
    });

    test('a result written on A is seen on B: latest status, last result, recent results and the open hour', async () => {
      const c = cluster();
      try {
        clock.now = H + 10 * MIN;
        const a = await c.start(['w']);
        const b = await c.start();
        a.history.append('url', 'w', ok(H + MIN, 5));
        a.history.append('url', 'w', {
          ts: H + 2 * MIN,
          status: 'DOWN',
          responseTimeMs: 0,
          message: 'connection refused',
          details: { suppressedBy: { name: 'gw' } },
          metrics: { certDaysLeft: 12 },
        });
        await a.history.flush(); // announced by the feed: B reads it without being asked
        const deadline = Date.now() + 20_000;
        while (b.history.latest('url', 'w')?.ts !== H + 2 * MIN && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(b.history.latest('url', 'w'), {
          dbname: 'url',
          name: 'w',
          ts: H + 2 * MIN,
          status: 'DOWN',
          responseTimeMs: 0,
          message: 'connection refused',
        });
        const last = b.seen.at(-1)!;
        assert.deepEqual(last.details, { suppressedBy: { name: 'gw' } });
        assert.deepEqual(last.metrics, { certDaysLeft: 12 });
        const recent = await b.history.recent('url', 'w', 5);
        assert.deepEqual(
          recent.map((r) => [r.status, r.message]),
          [
            ['DOWN', 'connection refused'],
            ['OK', undefined],
          ],
        );
        assert.equal((await b.history.rows('url', 'w', H, H + HOUR_MS)).length, 2, 'the open hour');
        assert.equal((await b.history.hourRollups('url', 'w', H, H + HOUR_MS))[0]?.rollup.count, 2);
        assert.equal(b.history.series().length, 1);
      } finally {
        await c.stop();
      }
    });

    test('a member keeps the rows of the series it holds, of the others the latest status until a read loads them', async () => {
      const c = cluster();
      try {
        clock.now = H + 10 * MIN;
        const a = await c.start(['p', 'q']);
        const b = await c.start(['r']);
        for (let i = 0; i < 5; i++) {
          a.history.append('url', 'p', ok(H + i * MIN, i));
          a.history.append('url', 'q', ok(H + i * MIN, i));
          b.history.append('url', 'r', ok(H + i * MIN, i));
        }
        await a.history.flush();
        await b.history.flush();
        await b.history.sync();
        await a.history.sync();
        assert.deepEqual(b.history.inMemory(), { series: 3, withRows: 1, partial: 2 }, 'B: its own rows, two latest');
        assert.equal(b.history.latest('url', 'p')?.ts, H + 4 * MIN, 'the latest status is followed');
        assert.deepEqual(a.history.inMemory(), { series: 3, withRows: 2, partial: 1 });
        // A read on B loads the open hour from the WAL; B then follows that series' rows (no second load).
        assert.equal((await b.history.rows('url', 'p', H, H + HOUR_MS)).length, 5);
        assert.deepEqual(b.history.inMemory(), { series: 3, withRows: 2, partial: 1 });
        a.history.append('url', 'p', ok(H + 5 * MIN, 5));
        a.history.append('url', 'q', ok(H + 5 * MIN, 5));
        await a.history.flush();
        await b.history.sync();
        assert.deepEqual(b.history.inMemory(), { series: 3, withRows: 2, partial: 1 }, 'p followed, q not');
        assert.equal((await b.history.recent('url', 'p', 20)).length, 6);
        assert.equal((await b.history.hourRollups('url', 'q', H, H + HOUR_MS))[0]?.rollup.count, 6, 'q loaded');
        // A read of hours the holder compacted long ago loads nothing.
        assert.deepEqual(await b.history.rows('url', 'r', H - 5 * HOUR_MS, H - 3 * HOUR_MS), []);
      } finally {
        await c.stop();
      }
    });

    test("a read of a series held elsewhere takes the holder's rows (unflushed ones too); the WAL when it cannot", async () => {
      const c = cluster();
      try {
        clock.now = H + 10 * MIN;
        const a = await c.start(['p', 'q']);
        const asked: string[] = [];
        let during: (() => Promise<void>) | undefined;
        const b = await c.start([], {
          // What cluster/series-fetch.ts does over HTTPS: the holder's openRows; q's holder "cannot be reached".
          openRowsOf: async (db, name) => {
            asked.push(name);
            if (name === 'q') return undefined;
            const rows = await a.history.openRows(db, name);
            await during?.();
            return rows;
          },
        });
        for (let i = 0; i < 5; i++) for (const n of ['p', 'q']) a.history.append('url', n, ok(H + i * MIN, i));
        await a.history.flush();
        await b.history.sync();
        assert.deepEqual(b.history.inMemory(), { series: 2, withRows: 0, partial: 2 });
        assert.equal(await b.history.openRows('url', 'p'), undefined, 'B does not hold p');
        a.history.append('url', 'p', ok(H + 5 * MIN, 5)); // in A's memory only (not in the WAL yet)
        // While the holder answers, A flushes a 7th row and B follows it: the read has it as well.
        during = async () => {
          during = undefined;
          a.history.append('url', 'p', ok(H + 6 * MIN, 6));
          await a.history.flush();
          await b.history.sync();
        };
        const rows = await b.history.rows('url', 'p', H, H + HOUR_MS);
        assert.deepEqual(
          rows.map((r) => r.ts),
          Array.from({ length: 7 }, (_, i) => H + i * MIN),
          "the WAL's 5, the unflushed 6th from the holder, the 7th followed meanwhile",
        );
        assert.equal((await b.history.rows('url', 'q', H, H + HOUR_MS)).length, 5, 'q: read from the WAL');
        assert.deepEqual(asked, ['p', 'q']);
        assert.deepEqual(b.history.inMemory(), { series: 2, withRows: 2, partial: 0 });
        a.history.append('url', 'p', ok(H + 7 * MIN, 7));
        await a.history.flush();
        await b.history.sync();
        assert.equal((await b.history.recent('url', 'p', 20)).length, 8, 'followed since, each row once');
        assert.deepEqual(asked, ['p', 'q'], 'no second ask');
      } finally {
        await c.stop();
      }
    });

    test('past 16 loads for reads within 10 minutes, a read loads every series and all rows are followed for 10', async () => {
      const c = cluster();
      try {
        clock.now = H + 10 * MIN;
        const names = Array.from({ length: 20 }, (_, i) => `v${i}`);
        const a = await c.start(names);
        const b = await c.start();
        const round = async (minute: number) => {
          for (const n of names) a.history.append('url', n, ok(H + minute * MIN, minute));
          await a.history.flush();
          await b.history.sync();
        };
        await round(0);
        assert.deepEqual(b.history.inMemory(), { series: 20, withRows: 0, partial: 20 });
        for (let i = 0; i < 16; i++) assert.equal((await b.history.recent('url', names[i]!, 5)).length, 1);
        assert.deepEqual(b.history.inMemory(), { series: 20, withRows: 16, partial: 4 }, 'one load per read');
        assert.equal((await b.history.recent('url', 'v16', 5)).length, 1);
        assert.deepEqual(b.history.inMemory(), { series: 20, withRows: 20, partial: 0 }, 'the 17th loads all');
        await round(1);
        assert.deepEqual(b.history.inMemory(), { series: 20, withRows: 20, partial: 0 }, 'every row followed');
        assert.equal((await b.history.recent('url', 'v19', 5)).length, 2);
        clock.now = H + 21 * MIN;
        await round(2);
        assert.deepEqual(b.history.inMemory(), { series: 20, withRows: 0, partial: 20 }, '10 minutes on: latest only');
        assert.equal((await b.history.rows('url', 'v3', H, H + HOUR_MS)).length, 3);
      } finally {
        await c.stop();
      }
    });

    test("a restarted member loads the series it holds again before compacting them (the old writer's rows too)", async () => {
      const c = cluster();
      try {
        clock.now = H + 10 * MIN;
        const a = await c.start(['m']);
        const b = await c.start();
        for (let i = 0; i < 30; i++) a.history.append('url', 'm', ok(H + i * MIN, i));
        await a.history.flush();
        await a.store.close(); // kill -9
        const a2 = await c.start();
        assert.deepEqual(
          a2.history.inMemory(),
          { series: 1, withRows: 0, partial: 1 },
          'the restart replays the latest',
        );
        assert.equal(a2.history.latest('url', 'm')?.ts, H + 29 * MIN);
        a2.held.add('m');
        a2.history.ownershipChanged();
        for (let i = 30; i < 60; i++) a2.history.append('url', 'm', ok(H + i * MIN, i));
        clock.now = H + HOUR_MS + GRACE_MS + 1000;
        await a2.history.sync(); // the load runs in the follow order: after it, the series is whole
        await a2.history.flush();
        await a2.history.flush();
        assert.equal((await rawRows(b.store, 'm', H)).length, 60, "the dead writer's 30 rows and the new one's 30");
        assert.equal((await hourRollup(b.store, 'm', H))?.count, 60);
        assert.equal((await b.history.hourRollups('url', 'm', H, H + HOUR_MS))[0]?.rollup.count, 60, 'read on B');
      } finally {
        await c.stop();
      }
    });
  });
}
