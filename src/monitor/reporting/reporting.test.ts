import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fixture } from '../history/history.kit.js';
import { timelineGraph } from './timeline.js';
import { histGraph, HIST_MAX_POINTS } from './hist-graph.js';
import { trend } from './trend.js';
import { type Status } from '../history/types.js';
import { HOUR_MS } from '../../core/time.js';

const T0 = Date.UTC(2026, 0, 10, 0, 0);
const MIN = 60_000;

test('timeline: segments with every transition, clipped to the range edges, and time shares', async () => {
  const f = await fixture({}, T0 + 2 * HOUR_MS);
  try {
    const seq: Array<[number, Status]> = [
      [0, 'OK'],
      [5, 'OK'],
      [10, 'DOWN'],
      [15, 'DOWN'],
      [20, 'OK'],
      [30, 'MAJOR'],
      [40, 'OK'],
    ];
    for (const [m, status] of seq) f.history.append('url', 'w', { ts: T0 + m * MIN, status, responseTimeMs: 10 });
    await f.history.flush();
    // Range starts inside the first OK run and ends inside the second OK run.
    const tl = await timelineGraph(f.history, 'url', 'w', T0 + 7 * MIN, T0 + 25 * MIN);
    assert.deepEqual(
      tl.segments.map((s) => [(s.from - T0) / MIN, (s.to - T0) / MIN, s.status]),
      [
        [7, 10, 'OK'],
        [10, 20, 'DOWN'],
        [20, 25, 'OK'],
      ],
    );
    assert.equal(tl.coveredMs, 18 * MIN);
    assert.deepEqual(tl.sharePct, { OK: 44.4444, DOWN: 55.5556 });
    // A range reaching past the newest result ends at `now` (T0 + 2 h); before the first result nothing is covered.
    const all = await timelineGraph(f.history, 'url', 'w', T0 - HOUR_MS, T0 + 3 * HOUR_MS);
    assert.deepEqual(
      all.segments.map((s) => [(s.from - T0) / MIN, (s.to - T0) / MIN, s.status]),
      [
        [0, 10, 'OK'],
        [10, 20, 'DOWN'],
        [20, 30, 'OK'],
        [30, 40, 'MAJOR'],
        [40, 120, 'OK'],
      ],
    );
    assert.deepEqual(all.sharePct, { OK: 83.3333, DOWN: 8.3333, MAJOR: 8.3333 });
    // Unflushed transitions count too.
    f.history.append('url', 'w', { ts: T0 + 50 * MIN, status: 'CRITICAL', responseTimeMs: 10 });
    const tl2 = await timelineGraph(f.history, 'url', 'w', T0 + 45 * MIN, T0 + 55 * MIN);
    assert.deepEqual(
      tl2.segments.map((s) => s.status),
      ['OK', 'CRITICAL'],
    );
  } finally {
    await f.cleanup();
  }
});

test('trend: hand-computed availability, avg, p95, counts and change, with an hour cut by the 24 h boundary', async () => {
  const now = T0 + 48 * HOUR_MS + 30 * MIN; // boundaries now−24h and now−48h fall at :30
  const f = await fixture({}, now);
  try {
    const add = (ts: number, status: Status, ms: number): void =>
      f.history.append('tcp', 't', { ts, status, responseTimeMs: ms });
    // Current 24 h [now−24h, now]: 100 results starting exactly at the boundary: 90 OK at 100 ms, 5 DOWN, 5 DOWNTIME.
    const cur0 = now - 24 * HOUR_MS;
    for (let i = 0; i < 100; i++) add(cur0 + i * 10 * MIN, i < 90 ? 'OK' : i < 95 ? 'DOWN' : 'DOWNTIME', 100);
    // Previous 24 h: 50 OK at 200 ms, the last ones in the same clock hour as the boundary (at :00..:29).
    for (let i = 0; i < 50; i++) add(cur0 - 1 * MIN - i * 5 * MIN, 'OK', 200);
    await f.history.flush();
    const t = await trend(f.history, 'tcp', 't');
    assert.equal(t['24h'].total, 100);
    assert.equal(t['24h'].availabilityPct, 94.7368); // 90 / (100 − 5 DOWNTIME)
    assert.equal(t['24h'].avgResponseMs, 100);
    assert.equal(t['24h'].p95ResponseMs, 100);
    assert.deepEqual([t['24h'].counts.OK, t['24h'].counts.DOWN, t['24h'].counts.DOWNTIME], [90, 5, 5]);
    assert.equal(t['24h'].previous.total, 50);
    assert.equal(t['24h'].previous.availabilityPct, 100);
    assert.equal(t['24h'].previous.avgResponseMs, 200);
    assert.deepEqual(t['24h'].change, { availabilityPct: -5.2632, avgResponseMs: -100, p95ResponseMs: -100 });
    // 7 d and 4 w hold everything; their previous periods are empty.
    assert.equal(t['7d'].total, 150);
    assert.equal(t['7d'].availabilityPct, 96.5517); // 140 / 145
    assert.equal(t['7d'].avgResponseMs, 135.714); // (90·100 + 50·200) / 140
    assert.equal(t['4w'].previous.total, 0);
    assert.equal(t['4w'].previous.availabilityPct, null);
    assert.equal(t['4w'].change.availabilityPct, null);
  } finally {
    await f.cleanup();
  }
});

test('histGraph: raw buckets for short ranges, hourly rollups for 30 days, bounded points', async () => {
  const now = T0 + 30 * 24 * HOUR_MS;
  const f = await fixture({}, now);
  try {
    for (let i = 0; i < 30 * 24 * 6; i++) {
      f.history.append('api', 'h', {
        ts: T0 + i * 10 * MIN,
        status: 'OK',
        responseTimeMs: (i % 6) * 10 + 10,
        metrics: { sizeB: i % 6 },
      });
    }
    await f.history.flush();
    const short = await histGraph(f.history, 'api', 'h', T0, T0 + 2 * HOUR_MS, 4);
    // points < 10 is raised to the minimum of 10.
    assert.equal(short.source, 'raw');
    assert.equal(short.bucketMs, 12 * MIN);
    assert.equal(short.t.length, 10);
    assert.deepEqual(
      [short.responseMs.min[0], short.responseMs.max[0], short.responseMs.avg[0], short.count[0]],
      [10, 20, 15, 2],
    );
    const month = await histGraph(f.history, 'api', 'h', T0, now);
    assert.equal(month.source, 'rollup');
    assert.equal(month.bucketMs, HOUR_MS);
    assert.equal(month.t.length, 720);
    assert.deepEqual([month.responseMs.min[5], month.responseMs.avg[5], month.responseMs.max[5]], [10, 35, 60]);
    assert.deepEqual(
      [month.metrics.sizeB!.min[0], month.metrics.sizeB!.avg[0], month.metrics.sizeB!.max[0]],
      [0, 2.5, 5],
    );
    const coarse = await histGraph(f.history, 'api', 'h', T0, now, 100);
    assert.ok(coarse.t.length <= 100);
    assert.equal(coarse.bucketMs, 8 * HOUR_MS);
    assert.equal(
      coarse.count.reduce((a, b) => a + b, 0),
      30 * 24 * 6,
    );
    const huge = await histGraph(f.history, 'api', 'h', T0, T0 + 10 * MIN, 1e9);
    assert.ok(huge.t.length <= HIST_MAX_POINTS);
  } finally {
    await f.cleanup();
  }
});
