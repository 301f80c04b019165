/**
 * Automatic thresholds in a cluster (auto-threshold-share.ts) on the PostgreSQL that CI starts: two members, each
 * with its own PostgresStore (its own change feed) over one namespace and a history that answers rollups from rows
 * given per member (a member not holding a series sees fewer of its rows: the open hours it does not follow). Each
 * member computes the series it holds only, and both answer with the holder's thresholds; a handover's newer record
 * wins; a record of an unknown format is skipped; of two overlapping reads of the bucket the later-started one wins;
 * a held shard left without series has its record deleted, and its thresholds go from every member.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { openPostgresStore, type PostgresStore } from '../../core/storage/postgres-store.js';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import type { HistoryService } from '../history/history.service.js';
import { rollupOf } from '../history/rollup.js';
import type { DbName } from '../history/types.js';
import { silent } from '../history/history.kit.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import { createAutoThresholds, type AutoThreshold, type AutoThresholds } from './auto-threshold.js';
import { AUTO_THRESHOLD_BUCKET, ThresholdShare, type ShardRef } from './auto-threshold-share.js';

const NOW = Date.UTC(2026, 0, 10, 12, 30);
const SHARD: Record<string, ShardRef> = { a1: { group: '*', shard: 1 }, b1: { group: '*', shard: 2 } };

/** A history of `ms` response times per series (60 results each) that counts its rollup reads. */
function fakeHistory(resp: Record<string, number>) {
  const reads: string[] = [];
  const history = {
    series: () => Object.keys(resp).map((name) => ({ dbname: 'url', name })),
    async hourRollups(_db: DbName, name: string) {
      reads.push(name);
      const rows = Array.from({ length: 60 }, (_, i) => ({
        ts: NOW - i * 60_000,
        code: 0,
        resp: resp[name]!,
        extra: false,
      }));
      return [{ hour: NOW - (NOW % 3_600_000), rollup: rollupOf(rows) }];
    },
  } as unknown as HistoryService;
  return { history, reads };
}

interface Member {
  store: PostgresStore;
  auto: AutoThresholds;
  reads: string[];
  held: Set<string>;
  /** Shards held with no series of their own. */
  emptyShards: ShardRef[];
}

const until = async (what: string, ok: () => boolean): Promise<void> => {
  const end = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`not within 10 s: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

const db = await createTestDatabase('auto_thresh');
if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  let n = 0;
  const settings = new Map([
    ['autoThreshold', 'true'],
    ['autoThresholdRange', '24'],
  ]);
  const clock = { now: NOW };
  const cluster = () => {
    const namespace = `at${++n}`;
    const members: Member[] = [];
    const start = async (id: string, held: string[], resp: Record<string, number>): Promise<Member> => {
      const store = await openPostgresStore({ url: db.url, namespace });
      const { history, reads } = fakeHistory(resp);
      const set = new Set(held);
      const emptyShards: ShardRef[] = [];
      const auto = createAutoThresholds({
        history,
        log: silent,
        settings: { get: (k) => settings.get(k) },
        clock: () => clock.now,
        intervalMs: 3_600_000,
        cluster: {
          share: new ThresholdShare(store, id, silent),
          heldShard: (_db, name) => (set.has(name) ? SHARD[name] : undefined),
          heldShards: () => [...[...set].map((name) => SHARD[name]!), ...emptyShards],
        },
      });
      const m = { store, auto, reads, held: set, emptyShards };
      members.push(m);
      return m;
    };
    const close = async () => {
      for (const m of members) {
        await m.auto.stop();
        await m.store.close();
      }
    };
    return { start, close, members };
  };

  test('each member computes the series it holds only; every member answers with the holder’s thresholds', async () => {
    const c = cluster();
    try {
      // b1 runs on B at 100 ms; A, not following b1's open hours, would see 300 ms if it computed b1 itself.
      const a = await c.start('A', ['a1'], { a1: 10, b1: 300 });
      const b = await c.start('B', ['b1'], { a1: 900, b1: 100 });
      a.auto.start();
      b.auto.start();
      await until('both members have both series', () =>
        [a, b].every((m) => m.auto.get('url', 'a1') && m.auto.get('url', 'b1')),
      );
      assert.deepEqual(a.reads, ['a1'], 'A read the rollups of the series it holds only');
      assert.deepEqual(b.reads, ['b1']);
      for (const m of [a, b]) {
        assert.equal(m.auto.get('url', 'a1')!.threshMin, 30, 'a1: 10 ms flat → m + 20, as A computed it');
        assert.equal(m.auto.get('url', 'b1')!.threshMin, 150, 'b1: 100 ms flat → 1.5·m, as B computed it');
      }
      assert.equal(a.auto.get('url', 'b1')!.medianMs, 100);
    } finally {
      await c.close();
    }
  });

  test('a handover: the new holder’s newer record replaces the one the old holder computed', async () => {
    const c = cluster();
    try {
      const a = await c.start('A', ['a1', 'b1'], { a1: 10, b1: 100 });
      const b = await c.start('B', [], { a1: 10, b1: 400 });
      // A has not started (follow): its record reaches B all the same (the share watches the bucket from the start).
      b.auto.start();
      assert.equal(await a.auto.recompute(), 2);
      await until('B reads A’s record', () => b.auto.get('url', 'b1')?.threshMin === 150);
      assert.equal(b.reads.length, 0, 'B holds nothing and read no rollup');
      // b1 moves to B, which computes it from its own rows (400 ms) one ms later.
      clock.now++;
      a.held.delete('b1');
      b.held.add('b1');
      a.auto.start();
      assert.equal(await b.auto.recompute(), 1);
      await until('A takes B’s newer record', () => a.auto.get('url', 'b1')?.threshMin === 600);
      assert.equal(a.auto.get('url', 'a1')!.threshMin, 30, 'A keeps the series it still holds');
    } finally {
      await c.close();
    }
  });

  test('a held shard left without series has its record deleted: its thresholds go from every member', async () => {
    const c = cluster();
    try {
      const aSeries = { a1: 10 };
      const a = await c.start('A', ['a1'], aSeries);
      const b = await c.start('B', [], {});
      const bucket = a.store.bucket(AUTO_THRESHOLD_BUCKET);
      // Records left over: shard 5 (held by A, no series: its monitors were deleted), shard 7 (held elsewhere).
      const stale = { v: 1, atMs: NOW - 1, member: 'gone', rows: [['url', 'old5', 31, 41, 81, 30, 10, 1]] };
      await bucket.put(['*', 5], stale);
      await bucket.put(['*', 7], { ...stale, rows: [['url', 'old7', 31, 41, 81, 30, 10, 1]] });
      a.emptyShards.push({ group: '*', shard: 5 });
      b.auto.start();
      assert.equal(await a.auto.recompute(), 1);
      assert.equal(await bucket.get(['*', 5]), undefined, 'A holds shard 5 and computed nothing there');
      assert.ok(await bucket.get(['*', 7]), 'shard 7 is not A’s to delete');
      assert.ok(await bucket.get(['*', 1]));
      await until('B has a1 and old7, not old5', () =>
        Boolean(b.auto.get('url', 'a1') && b.auto.get('url', 'old7') && !b.auto.get('url', 'old5')),
      );
      // a1 is deleted: its series goes, its shard stays held by A.
      delete (aSeries as Record<string, number>).a1;
      clock.now++;
      assert.equal(await a.auto.recompute(), 0);
      assert.equal(await bucket.get(['*', 1]), undefined);
      assert.equal(a.auto.get('url', 'a1'), undefined);
      await until('B drops a1', () => b.auto.get('url', 'a1') === undefined);
      assert.ok(b.auto.get('url', 'old7'));
    } finally {
      await c.close();
    }
  });

  test('a record of an unknown format and a malformed row are skipped, the others are used; off clears', async () => {
    const c = cluster();
    try {
      const a = await c.start('A', ['a1'], { a1: 10 });
      await a.store.bucket(AUTO_THRESHOLD_BUCKET).put(['*', 9], { v: 2, atMs: NOW, rows: [['url', 'x', 1, 2, 3]] });
      // A record of this format with a malformed row: that row is skipped, the record's others are used.
      const rows = [['url', 'y', 'bad', 2, 3, 30, 1, 0], ['url', 'z', 31, 41, 81, 30, 10, 1], 'junk'];
      await a.store.bucket(AUTO_THRESHOLD_BUCKET).put(['*', 10], { v: 1, atMs: NOW, member: 'X', rows });
      assert.equal(await a.auto.recompute(), 1);
      assert.equal(a.auto.get('url', 'x'), undefined);
      assert.equal(a.auto.get('url', 'y'), undefined);
      assert.deepEqual(a.auto.get('url', 'z'), {
        threshMin: 31,
        threshMaj: 41,
        threshCri: 81,
        computedAtMs: NOW,
        samples: 30,
        medianMs: 10,
        madMs: 1,
      });
      assert.equal(a.auto.get('url', 'a1')!.threshMin, 30);
      settings.set('autoThreshold', 'false');
      try {
        assert.equal(await a.auto.recompute(), 0);
        assert.equal(a.auto.get('url', 'a1'), undefined);
      } finally {
        settings.set('autoThreshold', 'true');
      }
    } finally {
      await c.close();
    }
  });
}

test('overlapping reads: one that started earlier and ends later is not applied over a later one', async () => {
  const share = new ThresholdShare(
    { bucket: () => ({}), watch: () => () => undefined } as unknown as KvStore,
    'A',
    silent,
  );
  const pending: Array<(m: Map<string, AutoThreshold>) => void> = [];
  share.read = () => new Promise((resolve) => pending.push(resolve));
  const applied: string[] = [];
  const apply = (m: Map<string, AutoThreshold>) => applied.push([...m.keys()].join());
  const first = share.refresh(apply);
  const second = share.refresh(apply);
  const snapshot = (k: string) => new Map([[k, {} as AutoThreshold]]);
  pending[1]!(snapshot('newer'));
  await second;
  pending[0]!(snapshot('older'));
  await first;
  assert.deepEqual(applied, ['newer']);
});
