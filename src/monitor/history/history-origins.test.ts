/**
 * Where results come from (origins.ts): the dictionary registers an origin once under a stable id and resolves
 * collisions; one process (LMDB) stamps its rows, which keep their origin through the WAL replay, the hour's
 * compaction and a restart as another origin; in a cluster (PostgreSQL) two writers of one monitor-hour — a handover
 * and a late row merged into the stored chunk — keep each row's own origin, read from a third instance.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { openPostgresStore, type PostgresStore } from '../../core/storage/postgres-store.js';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import { createHistoryService, type HistoryService } from './history.service.js';
import { ORIGINS_BUCKET, OriginRegistry, originHash, type ResultOrigin } from './origins.js';
import { decodeChunk } from './result-codec.js';
import { clusterHistoryOptions, fixture, silent } from './history.kit.js';
import { HOUR_MS } from '../../core/time.js';

const H = Date.UTC(2026, 0, 10, 12);
const MIN = 60_000;
const A: ResultOrigin = { probe: 'eu-1', location: 'Frankfurt', instance: 'host-a' };
const B: ResultOrigin = { probe: 'us-1', location: 'Ohio', instance: 'host-b' };
const ok = (ts: number) => ({ ts, status: 'OK' as const, responseTimeMs: 1 });
const where = (r: { probe?: string; location?: string; instance?: string }) => r.probe && `${r.probe}/${r.instance}`;

// Before any test is registered: with --test-force-exit the file's process exits once its registered tests have
// ended, so a test registered after this await could silently never run (test/meta/test-registration.test.ts).
const db = await createTestDatabase('hist_origins');

test('the origins dictionary: one stable id per origin, collisions and a racing claim move to the next id', async () => {
  const f = await fixture();
  try {
    const reg = new OriginRegistry(f.store);
    const id = await reg.register(A);
    assert.equal(id, originHash(A));
    assert.ok(id > 0 && id < 16_384, 'a 2-byte varint');
    assert.equal(await new OriginRegistry(f.store).register(A), id, 'a restart finds its entry');
    const taken = { v: 1, probe: 'other', location: '', instance: 'x' };
    await f.store.bucket(ORIGINS_BUCKET).put(originHash(B), taken);
    await f.store.claims.claim([`origin:${originHash(B) + 1}`], 'someone else registering', 60_000);
    const bId = await reg.register(B);
    assert.equal(bId, originHash(B) + 2, 'the collision and the claimed slot are skipped');
    assert.deepEqual(await f.store.bucket(ORIGINS_BUCKET).get(originHash(B)), taken, 'the other origin untouched');
    const fresh = new OriginRegistry(f.store);
    await fresh.resolve([bId, 0, undefined, 999]);
    assert.deepEqual(fresh.get(bId), B);
    assert.equal(fresh.get(999), undefined);
  } finally {
    await f.cleanup();
  }
});

test('one process stamps its origin: open hour, WAL replay, compaction, latest; a restart as another origin', async () => {
  const f = await fixture({ origin: A }, H + 30 * MIN);
  try {
    for (let i = 0; i < 5; i++) f.history.append('url', 'm', ok(H + i * MIN));
    assert.deepEqual((await f.history.recent('url', 'm', 2)).map(where), ['eu-1/host-a', 'eu-1/host-a'], 'in memory');
    await f.history.flush();
    await f.reopen(); // replays the WAL
    assert.equal(f.history.origin(f.history.latest('url', 'm')?.originId)?.location, 'Frankfurt');
    f.clock.now = H + HOUR_MS + 5 * MIN;
    await f.history.flush(); // compacts hour H
    const chunk = await f.store.bucket('hist.raw').get<Uint8Array>(['url', 'm', H]);
    assert.deepEqual(
      decodeChunk(H, chunk!).map((r) => r.origin),
      Array<number>(5).fill(originHash(A)),
    );
    await f.history.close();
    await f.store.close();
    const store = await openLmdbStore({ path: `${f.dir}/db`, noSync: true });
    const opts = { store, log: silent, clock: () => f.clock.now, retentionHours: () => 24 * 365 };
    const again = await createHistoryService({ ...opts, origin: B });
    Object.assign(f, { store, history: again });
    assert.equal(again.origin(again.latest('url', 'm')?.originId)?.probe, 'eu-1', 'hist.latest kept the origin');
    again.append('url', 'm', ok(H + HOUR_MS + 6 * MIN));
    const got = await again.recent('url', 'm', 3);
    assert.deepEqual(got.map(where), ['us-1/host-b', 'eu-1/host-a', 'eu-1/host-a']);
    assert.deepEqual(
      { probe: got[1]!.probe, location: got[1]!.location, instance: got[1]!.instance },
      A,
      'every field of the origin',
    );
  } finally {
    await f.cleanup();
  }
});

if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  describe('origins in a cluster', () => {
    test('two writers of one hour (handover, then a late row merged into the stored chunk) keep each row its origin', async () => {
      const clock = { now: H + 5 * MIN };
      const open: Array<{ store: PostgresStore; history: HistoryService }> = [];
      const start = async (origin: ResultOrigin | undefined, held: Set<string>) => {
        const store = await openPostgresStore({ url: db.url, namespace: 'origins1' });
        const history = await createHistoryService({
          ...clusterHistoryOptions(store, clock, held),
          ...(origin ? { origin } : {}),
        });
        open.push({ store, history });
        return history;
      };
      try {
        const heldA = new Set(['x']);
        const heldB = new Set<string>();
        const a = await start(A, heldA);
        const b = await start(B, heldB);
        for (let i = 0; i < 10; i++) a.append('url', 'x', ok(H + i * MIN));
        await a.flush();
        heldA.delete('x'); // handover to B mid-hour
        heldB.add('x');
        b.ownershipChanged();
        await b.sync();
        for (let i = 10; i < 20; i++) b.append('url', 'x', ok(H + i * MIN));
        a.append('url', 'x', ok(H + 25 * MIN)); // A's run in flight at the handover
        await Promise.all([a.flush(), b.flush()]);
        clock.now = H + HOUR_MS + 20_000;
        await b.sync();
        await a.flush();
        await b.flush(); // B compacts hour H: A's rows and its own
        const stored = async () =>
          decodeChunk(H, (await open[0]!.store.bucket('hist.raw').get<Uint8Array>(['url', 'x', H]))!);
        const ids = (rows: Array<{ origin?: number }>) => rows.map((r) => r.origin);
        const [ia, ib] = [originHash(A), originHash(B)];
        assert.deepEqual(ids(await stored()), [...Array<number>(10).fill(ia), ...Array<number>(10).fill(ib), ia]);
        a.append('url', 'x', ok(H + 40 * MIN)); // a late row of the closed hour: merged into the stored chunk
        await a.flush();
        await b.sync();
        await b.flush();
        assert.deepEqual(ids(await stored()), [...Array<number>(10).fill(ia), ...Array<number>(10).fill(ib), ia, ia]);
        const c = await start(undefined, new Set()); // a reader that registered nothing resolves both from the store
        const got = await c.recent('url', 'x', 22);
        assert.deepEqual(got.slice(0, 3).map(where), ['eu-1/host-a', 'eu-1/host-a', 'us-1/host-b']);
        assert.equal(got.filter((r) => r.probe === 'us-1' && r.location === 'Ohio').length, 10);
      } finally {
        for (const i of open) {
          await i.history.close().catch(() => undefined);
          await i.store.close().catch(() => undefined);
        }
      }
    });
  });
}
