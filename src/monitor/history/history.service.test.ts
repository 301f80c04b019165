import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeChunk, encodeChunk, type RawRow } from './result-codec.js';
import { emptyRollup, addRow, densify, mergeRollup, quantile, rollupOf, decodeRollup, encodeRollup } from './rollup.js';
import { fixture } from './history.kit.js';
import { STATUSES, STATUS_CODE, hourStart, type ResultRecord, type Status } from './types.js';
import { HOUR_MS } from '../../core/time.js';

const T0 = Date.UTC(2026, 0, 10, 0, 0);

/** Deterministic pseudo-random numbers. */
function rng(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
}

test('chunk codec round-trips rows with flags and metrics', () => {
  const rows: RawRow[] = [
    { ts: T0 + 1, code: 0, resp: Math.fround(12.3), extra: true },
    { ts: T0 + 60_000, code: 4, resp: 0, extra: false, metrics: { dnsMs: 1.5 } },
    { ts: T0 + 120_000, code: 7, resp: Math.fround(999.9), extra: false, metrics: { dnsMs: 2, connectMs: 3 } },
  ];
  const bytes = encodeChunk(T0, rows);
  assert.deepEqual(decodeChunk(T0, bytes), rows);
  const plain = Array.from(
    { length: 60 },
    (_, i): RawRow => ({ ts: T0 + i * 60_000, code: 0, resp: 50, extra: false }),
  );
  assert.ok(encodeChunk(T0, plain).length <= 60 * 8 + 3, 'a one-minute row without metrics takes at most 8 bytes');
});

test('rollups equal a direct computation over the raw rows (count, sum, min, max, statuses, metrics)', async () => {
  const f = await fixture();
  try {
    const rand = rng(7);
    const input: ResultRecord[] = [];
    for (let i = 0; i < 3 * 60 * 4; i++) {
      const status = STATUSES[Math.floor(rand() * 8)]!;
      const rec: ResultRecord = {
        ts: T0 + i * 15_000,
        status,
        responseTimeMs: rand() * 500,
        metrics: { dnsMs: rand() * 10 },
      };
      input.push(rec);
      f.history.append('url', 'm1', rec);
    }
    await f.history.flush();
    await f.reopen();
    const hours = await f.history.hourRollups('url', 'm1', T0, T0 + 3 * HOUR_MS);
    const raw = await f.history.hourRows('url', 'm1', T0, T0 + 3 * HOUR_MS);
    assert.equal(hours.length, 3);
    for (let h = 0; h < 3; h++) {
      const stored = densify(hours[h]!.rollup);
      assert.deepEqual(stored, rollupOf(raw[h]!.rows));
      // Against the input records themselves.
      const recs = input.filter((r) => hourStart(r.ts) === T0 + h * HOUR_MS);
      const measured = recs.filter((r) => STATUS_CODE[r.status] <= 3).map((r) => Math.fround(r.responseTimeMs));
      assert.equal(stored.count, recs.length);
      assert.equal(stored.respCount, measured.length);
      assert.ok(Math.abs(stored.respSum - measured.reduce((a, b) => a + b, 0)) < 1e-6);
      assert.equal(stored.respMin, Math.min(...measured));
      assert.equal(stored.respMax, Math.max(...measured));
      for (const s of STATUSES)
        assert.equal(stored.statusCounts[STATUS_CODE[s]], recs.filter((r) => r.status === s).length);
      const dns = recs.map((r) => r.metrics!.dnsMs!);
      assert.equal(stored.metrics.dnsMs!.count, dns.length);
      assert.equal(stored.metrics.dnsMs!.max, Math.max(...dns));
      assert.ok(Math.abs(stored.metrics.dnsMs!.sum - dns.reduce((a, b) => a + b, 0)) < 1e-9);
    }
    assert.deepEqual(densify(decodeRollup(encodeRollup(hours[0]!.rollup))), densify(hours[0]!.rollup));
    // After a restart, a new hour of the same day joins the stored day block without losing its other hours.
    f.history.append('url', 'm1', { ts: T0 + 3 * HOUR_MS + 5, status: 'OK', responseTimeMs: 1 });
    await f.history.flush();
    await f.reopen();
    const after = await f.history.hourRollups('url', 'm1', T0, T0 + 24 * HOUR_MS);
    assert.deepEqual(
      after.map((h) => h.rollup.count),
      [240, 240, 240, 1],
    );
    assert.deepEqual(densify(after[1]!.rollup), densify(hours[1]!.rollup));
  } finally {
    await f.cleanup();
  }
});

test('p95 from the histogram stays within one bucket of the exact nearest-rank value', () => {
  const acc = emptyRollup();
  for (let v = 1; v <= 100; v++) addRow(acc, { ts: 0, code: 0, resp: v, extra: false });
  const p95 = quantile(acc, 0.95)!;
  assert.ok(Math.abs(p95 - 95) <= 95 * 0.0906, `p95 ${p95}`);
  const flat = emptyRollup();
  for (let i = 0; i < 50; i++) addRow(flat, { ts: 0, code: 0, resp: 100, extra: false });
  assert.equal(quantile(flat, 0.95), Math.fround(100));
  const merged = emptyRollup();
  mergeRollup(merged, acc);
  mergeRollup(merged, flat);
  assert.equal(merged.respCount, 150);
});

test('unflushed results are visible; latest and latestAll; data survives reopen and later appends merge', async () => {
  const f = await fixture();
  try {
    f.history.append('tcp', 'a', { ts: T0 + 1000, status: 'OK', responseTimeMs: 5, message: 'open' });
    f.history.append('tcp', 'a', { ts: T0 + 61_000, status: 'OK', responseTimeMs: 6, message: 'open' });
    f.history.append('tcp', 'b', { ts: T0 + 2000, status: 'DOWN', responseTimeMs: 3000, message: 'refused' });
    assert.equal((await f.history.rows('tcp', 'a', T0, T0 + HOUR_MS)).length, 2);
    assert.equal(f.history.latest('tcp', 'a')?.responseTimeMs, 6);
    assert.equal(f.history.latestAll().length, 2);
    await f.history.flush();
    await f.reopen();
    assert.deepEqual(f.history.latest('tcp', 'b'), {
      dbname: 'tcp',
      name: 'b',
      ts: T0 + 2000,
      status: 'DOWN',
      responseTimeMs: 3000,
      message: 'refused',
    });
    // Same hour after a restart: the stored rows must be kept.
    f.history.append('tcp', 'a', { ts: T0 + 121_000, status: 'OK', responseTimeMs: 7 });
    f.history.append('tcp', 'a', { ts: T0 + 181_000, status: 'MAJOR', responseTimeMs: 800, message: 'slow' });
    f.history.append('tcp', 'a', { ts: T0 + 241_000, status: 'MAJOR', responseTimeMs: 900, message: 'slow' });
    await f.history.flush();
    await f.reopen();
    const recent = await f.history.recent('tcp', 'a', 10);
    assert.deepEqual(
      recent.map((r) => [r.ts - T0, r.status, r.responseTimeMs, r.message]),
      [
        [241_000, 'MAJOR', 900, 'slow'],
        [181_000, 'MAJOR', 800, 'slow'],
        [121_000, 'OK', 7, undefined],
        [61_000, 'OK', 6, 'open'],
        [1000, 'OK', 5, 'open'],
      ],
    );
    assert.deepEqual(
      (await f.history.recent('tcp', 'a', 2)).map((r) => r.ts - T0),
      [241_000, 181_000],
    );
  } finally {
    await f.cleanup();
  }
});

test('recent spans hours and keeps details; deleteMonitor removes everything', async () => {
  const f = await fixture();
  try {
    for (let i = 0; i < 150; i++) {
      const status: Status = i % 50 === 49 ? 'ERROR' : 'OK';
      f.history.append('api', 'x', {
        ts: T0 + i * 60_000,
        status,
        responseTimeMs: i,
        ...(status === 'ERROR' ? { message: 'HTTP 500', details: { code: 500 } } : {}),
      });
    }
    await f.history.flush();
    const r = await f.history.recent('api', 'x', 120);
    assert.equal(r.length, 120);
    assert.equal(r[0]!.ts, T0 + 149 * 60_000);
    const err = r.find((x) => x.status === 'ERROR')!;
    assert.deepEqual([err.message, err.details], ['HTTP 500', { code: 500 }]);
    assert.equal(r.find((x) => x.ts === T0 + 100 * 60_000)!.message, undefined);
    await f.history.deleteMonitor('api', 'x');
    assert.equal(f.history.latest('api', 'x'), undefined);
    assert.equal((await f.history.rows('api', 'x', 0, Infinity)).length, 0);
    assert.equal((await f.history.hourRollups('api', 'x', 0, Infinity)).length, 0);
    for (const b of await f.store.buckets()) if (b.name.startsWith('hist.')) assert.equal(b.keys, 0, b.name);
  } finally {
    await f.cleanup();
  }
});

test('purge drops raw hours older than dataRetention and keeps rollups and transitions', async () => {
  const now = T0 + 10 * HOUR_MS + 30 * 60_000;
  const f = await fixture({ retentionHours: () => 3 }, now);
  try {
    for (let i = 0; i < 10 * 60; i += 5) {
      f.history.append('ping', 'p', {
        ts: T0 + i * 60_000,
        status: i % 60 === 0 ? 'DOWN' : 'OK',
        responseTimeMs: 1,
        message: `m${i}`,
      });
    }
    await f.history.flush();
    await f.history.purge();
    const hours = (await f.history.hourRows('ping', 'p', 0, Infinity)).map((h) => (h.hour - T0) / HOUR_MS);
    // Cutoff = hourStart(now − 3 h) = T0 + 7 h: hours 7, 8, 9 stay.
    assert.deepEqual(hours, [7, 8, 9]);
    assert.equal((await f.history.hourRollups('ping', 'p', 0, Infinity)).length, 10);
    const recent = await f.history.recent('ping', 'p', 1000);
    assert.equal(recent.length, 36);
    assert.equal(recent[recent.length - 1]!.message, 'm420');
    const tl = await f.history.transitions('ping', 'p', T0, now);
    assert.equal(tl[0]!.t, T0);
  } finally {
    await f.cleanup();
  }
});
