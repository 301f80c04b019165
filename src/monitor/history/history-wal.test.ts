import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { createHistoryService } from './history.service.js';
import {
  createHistoryWal,
  decodeWalRecord,
  encodeWalRecord,
  GONE_BUCKET,
  WAL_BUCKET,
  type WalRow,
} from './history-wal.js';
import { fixture, silent, type Fixture } from './history.kit.js';
import { HOUR_MS } from '../../core/time.js';
import { MONITOR_MIGRATIONS } from '../migrations.js';
import type { RawRow } from './result-codec.js';

const H = Date.UTC(2026, 0, 10, 12); // the fixture's clock starts at 12:30 of this hour
const MIN = 60_000;

async function keys(f: Fixture, bucket: string): Promise<number> {
  return (await f.store.buckets()).find((b) => b.name === bucket)?.keys ?? 0;
}

test('WAL records round-trip rows of several series with flags and metrics', () => {
  const rows: WalRow[] = [
    { db: 'url', name: 'a', row: { ts: H + 1, code: 0, resp: Math.fround(1.5), extra: true } },
    {
      db: 'snmp',
      name: 'ünïcode name',
      row: { ts: H + 2 * MIN, code: 7, resp: 0, extra: false, metrics: { value: 42 } },
    },
    { db: 'exec', name: 'b'.repeat(300), row: { ts: H + 3 * MIN, code: 3, resp: Math.fround(99.9), extra: false } },
  ];
  assert.deepEqual(decodeWalRecord(encodeWalRecord(rows)), rows);
});

test('the open hour is one WAL record per flush, not a chunk rewrite; a restart replays it', async () => {
  const f = await fixture();
  try {
    for (let i = 0; i < 10; i++)
      f.history.append('url', 'a', { ts: H + i * MIN, status: 'OK', responseTimeMs: i, message: 'steady' });
    f.history.append('url', 'b', { ts: H + MIN, status: 'DOWN', responseTimeMs: 0, message: 'refused' });
    await f.history.flush();
    assert.equal(await keys(f, 'hist.raw'), 0, 'no chunk is written for the open hour');
    assert.equal(await keys(f, 'hist.day'), 0, 'no day block is rewritten for the open hour');
    assert.equal(await keys(f, WAL_BUCKET), 1);
    f.history.append('url', 'a', { ts: H + 10 * MIN, status: 'OK', responseTimeMs: 10, message: 'steady' });
    await f.history.flush();
    assert.equal(await keys(f, WAL_BUCKET), 2);
    await f.reopen();
    f.history.append('url', 'a', { ts: H + 11 * MIN, status: 'OK', responseTimeMs: 11, message: 'steady' });
    await f.history.flush();
    await f.reopen();
    const rows = await f.history.rows('url', 'a', H, H + HOUR_MS);
    assert.deepEqual(
      rows.map((r) => r.resp),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
    assert.deepEqual(
      f.history.latest('url', 'a'),
      { dbname: 'url', name: 'a', ts: H + 11 * MIN, status: 'OK', responseTimeMs: 11, message: 'steady' },
      'latest comes back from the replay',
    );
    assert.deepEqual(f.history.latest('url', 'b'), {
      dbname: 'url',
      name: 'b',
      ts: H + MIN,
      status: 'DOWN',
      responseTimeMs: 0,
      message: 'refused',
    });
    const [roll] = await f.history.hourRollups('url', 'a', H, H + HOUR_MS);
    assert.equal(roll?.rollup.count, 12);
    const recent = await f.history.recent('url', 'a', 3);
    assert.deepEqual(
      recent.map((r) => [r.responseTimeMs, r.message]),
      [
        [11, 'steady'],
        [10, 'steady'],
        [9, 'steady'],
      ],
    );
  } finally {
    await f.cleanup();
  }
});

test('after the hour closes its chunks are compacted (a bounded number per flush) and its WAL records dropped', async () => {
  const f = await fixture({ compactPerFlush: 2 });
  try {
    for (const name of ['a', 'b', 'c', 'd', 'e']) {
      for (let i = 0; i < 30; i++)
        f.history.append('tcp', name, { ts: H + 30 * MIN + i * MIN, status: 'OK', responseTimeMs: i });
    }
    await f.history.flush();
    assert.equal(await keys(f, 'hist.raw'), 0);
    f.clock.now = H + HOUR_MS + 5_000;
    await f.history.flush();
    assert.equal(await keys(f, 'hist.raw'), 2, 'two series per flush');
    assert.equal(await keys(f, WAL_BUCKET), 1, 'the WAL stays until every chunk of its hour is compacted');
    await f.history.flush();
    await f.history.flush();
    assert.equal(await keys(f, 'hist.raw'), 5);
    assert.equal(await keys(f, 'hist.day'), 5);
    assert.equal(await keys(f, WAL_BUCKET), 0);
    await f.reopen();
    const [roll] = await f.history.hourRollups('tcp', 'c', H, H + HOUR_MS);
    assert.equal(roll?.rollup.count, 30, 'the rollup written at compaction');
    assert.equal((await f.history.rows('tcp', 'e', H, H + HOUR_MS)).length, 30);
  } finally {
    await f.cleanup();
  }
});

test('a crash after a flush loses nothing that flush wrote; rows straddling the hour are all kept', async () => {
  const f = await fixture();
  try {
    for (let i = 0; i < 5; i++)
      f.history.append('ping', 'p', { ts: H + 50 * MIN + i * MIN, status: 'OK', responseTimeMs: i });
    await f.history.flush();
    f.clock.now = H + HOUR_MS + 30_000;
    f.history.append('ping', 'p', { ts: H + 59 * MIN + 59_000, status: 'MINOR', responseTimeMs: 5 }); // late row of the old hour
    f.history.append('ping', 'p', { ts: H + HOUR_MS + 10_000, status: 'OK', responseTimeMs: 6 });
    await f.history.flush();
    f.history.append('ping', 'p', { ts: H + HOUR_MS + 70_000, status: 'OK', responseTimeMs: 7 }); // never flushed
    await f.store.close(); // the process dies: no history.close()
    const store = await openLmdbStore({ path: join(f.dir, 'db'), noSync: true });
    const history = await createHistoryService({
      store,
      log: silent,
      clock: () => f.clock.now,
      retentionHours: () => 24,
      flushIntervalMs: 60_000,
    });
    try {
      const rows = await history.rows('ping', 'p', H, H + 2 * HOUR_MS);
      assert.deepEqual(
        rows.map((r) => r.resp),
        [0, 1, 2, 3, 4, 5, 6],
      );
      assert.equal(history.latest('ping', 'p')?.ts, H + HOUR_MS + 10_000);
    } finally {
      await history.close();
      await store.close();
    }
  } finally {
    await f.cleanup();
  }
});

test('a monitor deleted while its rows are in the WAL does not come back after a restart; a new one of that name starts clean', async () => {
  const f = await fixture();
  try {
    for (let i = 0; i < 5; i++)
      f.history.append('db', 'q', { ts: H + i * MIN, status: 'ERROR', responseTimeMs: i, message: 'bad' });
    await f.history.flush();
    f.clock.now = H + 40 * MIN;
    await f.history.deleteMonitor('db', 'q');
    assert.equal(await keys(f, GONE_BUCKET), 1);
    f.history.append('db', 'q', { ts: H + 41 * MIN, status: 'OK', responseTimeMs: 1 });
    await f.history.flush();
    await f.reopen();
    const rows = await f.history.rows('db', 'q', H, H + HOUR_MS);
    assert.deepEqual(
      rows.map((r) => r.ts),
      [H + 41 * MIN],
    );
    assert.equal(f.history.latest('db', 'q')?.status, 'OK');
    f.clock.now = H + HOUR_MS + MIN;
    await f.history.flush();
    assert.equal(await keys(f, WAL_BUCKET), 0);
    assert.equal(await keys(f, GONE_BUCKET), 0, 'tombstones go with the WAL hours they guarded');
  } finally {
    await f.cleanup();
  }
});

test('format-1 WAL records ([flushMs, seq]) are re-keyed [hourMs, writer, seq] by the migration and replayed', async () => {
  const f = await fixture();
  try {
    const rows = (from: number): WalRow[] =>
      [0, 1, 2].map((i) => ({
        db: 'tcp',
        name: 't',
        row: { ts: H + (from + i) * MIN, code: 0, resp: i, extra: false },
      }));
    await f.store.bucket(WAL_BUCKET).put([H + 5 * MIN, 0], encodeWalRecord(rows(0)));
    await f.store.bucket(WAL_BUCKET).put([H + 5 * MIN, 1], encodeWalRecord(rows(3)));
    const migration = MONITOR_MIGRATIONS.find((m) => m.id === '2026-11-26-hist-wal-writer-keys')!;
    const ctx = { store: f.store, dataDir: f.dir, service: 'monitor', log: silent };
    await migration.up(ctx);
    await migration.up(ctx); // idempotent
    const keysAfter: unknown[] = [];
    for await (const e of f.store.bucket(WAL_BUCKET).range()) keysAfter.push(e.key);
    assert.deepEqual(keysAfter, [
      [H, 'format-1', 0],
      [H, 'format-1', 1],
    ]);
    await f.reopen();
    assert.equal((await f.history.rows('tcp', 't', H, H + HOUR_MS)).length, 6);
  } finally {
    await f.cleanup();
  }
});

test('a record whose rows share, change and drop metric names decodes each row with its own (names reused by bytes)', () => {
  const url = (i: number, metrics?: Record<string, number>, origin?: number): WalRow => {
    const row: RawRow = { ts: H + i * 1000, code: i % 8, resp: Math.fround(i + 0.25), extra: i % 2 === 0 };
    if (metrics) row.metrics = metrics;
    if (origin) row.origin = origin;
    return { db: 'url', name: `u${i}`, row };
  };
  const rows = [
    url(1, { dns: 1, connect: 2.5 }, 9),
    url(2, { dns: 3, connect: 4 }, 9),
    url(3, { dns: 5, content: 6 }), // the same section length, other bytes: decoded, not reused
    url(4),
    url(5, { dns: 7, connect: 8 }, 1234),
    url(6, { dns: 9, connect: 10 }),
  ];
  const back = decodeWalRecord(encodeWalRecord(rows));
  assert.deepEqual(back, rows);
  assert.notEqual(back[0]!.row.metrics, back[1]!.row.metrics, 'each row has its own metrics object');
  // A truncated record is an error, not rows made of the next row's bytes.
  const bytes = encodeWalRecord(rows.slice(0, 2));
  assert.throws(() => decodeWalRecord(bytes.subarray(0, bytes.length - 3)));
});

test('decodeWalRecord with a filter decodes only the rows of the series it accepts', () => {
  const rows: WalRow[] = [
    { db: 'url', name: 'a', row: { ts: H + 1, code: 0, resp: 1, extra: false, metrics: { x: 1 } } },
    { db: 'url', name: 'b', row: { ts: H + 2, code: 4, resp: 0, extra: true } },
    { db: 'ping', name: 'a', row: { ts: H + 3, code: 0, resp: 2, extra: false, metrics: { x: 2 } } },
    { db: 'url', name: 'a', row: { ts: H + 4, code: 0, resp: 3, extra: false, metrics: { x: 1 } } },
  ];
  const got = decodeWalRecord(encodeWalRecord(rows), (db, name) => db === 'url' && name === 'a');
  assert.deepEqual(got, [rows[0], rows[3]]);
});

test("scan reads every writer's rows of the series asked (this one's too), minus deleted ones, and leaves the cursors", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-scan-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  try {
    const w1 = createHistoryWal(store);
    const w2 = createHistoryWal(store);
    const row = (ts: number): RawRow => ({ ts, code: 0, resp: 1, extra: false });
    const rec = (w: typeof w1, rs: WalRow[]) => store.batch(w.recordOps(new Map([[H, rs]])));
    await rec(w1, [
      { db: 'url', name: 'a', row: row(H + 1) },
      { db: 'url', name: 'gone', row: row(H + 2) },
    ]);
    await rec(w2, [
      { db: 'url', name: 'a', row: row(H + 3) },
      { db: 'url', name: 'c', row: row(H + 4) },
    ]);
    await w1.markGone('url', 'gone', H + 10);
    const got = await w1.scan((_db, name) => name !== 'c');
    assert.deepEqual(got.map((r) => [r.name, r.row.ts - H]).sort(), [
      ['a', 1],
      ['a', 3],
    ]);
    assert.equal((await w1.follow(H)).length, 2, "the other writer's record is still to follow");
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
