import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openLmdbStore, type LmdbStore } from '../../core/storage/lmdb-store.js';
import { downsample, graph, pruneSeries, readSeries, RETENTION_MS, seriesOps } from './series.js';

let dir: string;
let store: LmdbStore;
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agent-series-'));
  store = await openLmdbStore({ path: dir, noSync: true });
});
after(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('downsample: at most maxPoints buckets over the range, whatever the number of points', () => {
  for (const [n, maxPoints, span] of [
    [10_000, 300, 86_400_000],
    [301, 300, 301],
    [5000, 7, 10_000],
    [1000, 300, 10],
  ] as const) {
    const pts: Array<[number, number]> = Array.from({ length: n }, (_, i) => [1000 + Math.floor((i * span) / n), i]);
    const out = downsample(pts, 1000, 1000 + span, maxPoints);
    assert.ok(out.length <= maxPoints, `${n} points over ${span} ms → ${out.length} > ${maxPoints}`);
    assert.equal(
      out.reduce((a, p) => a + p.samples, 0),
      n,
      'every point is in a bucket',
    );
    for (let i = 1; i < out.length; i++) assert.ok(out[i]!.timeMs > out[i - 1]!.timeMs, 'buckets in time order');
    assert.ok(out.every((p) => p.timeMs >= 1000 && p.timeMs <= 1000 + span));
  }
  // Points outside the range (never read, but) still cannot add buckets.
  assert.equal(
    downsample(
      [
        [-50, 1],
        [0, 1],
        [5, 1],
        [9, 1],
        [500, 1],
      ],
      0,
      9,
      2,
    ).length,
    2,
  );
});

test('downsample: min, avg and max of each bucket; few points are returned as they are', () => {
  const pts: Array<[number, number]> = [
    [0, 1],
    [1, 5],
    [2, 3],
    [10, 10],
    [11, 20],
    [12, 30],
    [13, 40],
  ];
  const out = downsample(pts, 0, 19, 2);
  assert.deepEqual(out, [
    { timeMs: 0, min: 1, max: 5, avg: 3, samples: 3 },
    { timeMs: 10, min: 10, max: 40, avg: 25, samples: 4 },
  ]);
  const thirds = downsample(
    [
      [0, 1],
      [1, 1],
      [1, 2],
    ],
    0,
    1,
    1,
  );
  assert.equal(thirds[0]!.avg, 1.33, 'averages rounded to 2 decimals');
  assert.deepEqual(downsample([[5, 7]], 0, 100, 300), [{ timeMs: 5, avg: 7, min: 7, max: 7, samples: 1 }]);
  assert.deepEqual(downsample([], 0, 100, 300), []);
});

test('series: stored per cycle, read by range (inclusive), graphed per key', async () => {
  for (let t = 0; t < 1000; t++) await store.batch(seriesOps({ a_cpu: t % 10, b_cpu: 1 }, 10_000 + t * 1000));
  const r = await readSeries(store, 'a_cpu', 10_000, 12_000);
  assert.deepEqual(r, [
    [10_000, 0],
    [11_000, 1],
    [12_000, 2],
  ]);
  assert.deepEqual(await readSeries(store, 'a_cpu', 0, 9_999), []);
  const g = await graph(store, ['a_cpu', 'b_cpu', 'none'], 10_000, 10_000 + 999_000, 100);
  assert.ok(g.a_cpu!.length <= 100 && g.a_cpu!.length > 0);
  assert.equal(g.a_cpu![0]!.min, 0);
  assert.equal(g.a_cpu![0]!.max, 9);
  assert.equal(g.a_cpu![0]!.avg, 4.5);
  assert.deepEqual(g.none, []);
});

test('pruneSeries: removes points older than the retention for every key, keeps the rest', async () => {
  const nowMs = RETENTION_MS + 100 * 86_400_000;
  const cut = nowMs - RETENTION_MS;
  const ops = [];
  for (const k of ['old_cpu', 'port_22', 'system_mem', 'zzz']) {
    for (const t of [cut - 86_400_000, cut - 1, cut, cut + 1, nowMs]) ops.push(...seriesOps({ [k]: 1 }, t));
  }
  await store.batch(ops);
  const before = await store.bucket('METRICS').count();
  const removed = await pruneSeries(store, nowMs);
  // The 1000-point a_cpu/b_cpu series of the previous test are long past retention too.
  assert.equal(removed, 4 * 2 + 2000);
  assert.equal(await store.bucket('METRICS').count(), before - removed);
  for (const k of ['old_cpu', 'port_22', 'system_mem', 'zzz'])
    assert.deepEqual(
      (await readSeries(store, k, 0, nowMs)).map(([t]) => t),
      [cut, cut + 1, nowMs],
      k,
    );
  assert.equal(await pruneSeries(store, nowMs), 0);
});
