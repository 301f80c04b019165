import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RawRow } from './result-codec.js';
import { RowBuffer } from './row-buffer.js';

const H = Date.UTC(2026, 0, 10, 12);

test('rows round-trip exactly: flags, float32 response time, integer / float32 / float64 / negative / NaN metrics', () => {
  const rows: RawRow[] = [
    { ts: H, code: 0, resp: Math.fround(12.345), extra: true },
    {
      ts: H + 59_999,
      code: 7,
      resp: 0,
      extra: false,
      metrics: {
        statusCode: 200,
        bodyBytes: 2 ** 40,
        dnsMs: 0.125,
        ttfbMs: 1.234567,
        connectMs: 0.311,
        totalMs: 1234.567,
        tiny: 0.1 + 0.2,
        days: -3.5,
        odd: NaN,
      },
    },
    {
      ts: H + 3_599_999,
      code: 4,
      resp: Math.fround(99.5),
      extra: false,
      metrics: { ttfbMs: 2 ** 60, statusCode: 503 },
    },
  ];
  assert.deepEqual(RowBuffer.of(H, rows).rows(), rows);
});

test('rows appended out of order come back sorted by ts, one per ts (the last appended); count and lastTs follow', () => {
  const b = new RowBuffer(H);
  for (const ts of [H + 3000, H + 1000, H + 2000, H + 500]) b.append({ ts, code: 0, resp: 1, extra: false });
  assert.deepEqual(
    b.rows().map((r) => r.ts - H),
    [500, 1000, 2000, 3000],
  );
  b.append({ ts: H + 1000, code: 3, resp: 2, extra: false });
  b.append({ ts: H + 3000, code: 4, resp: 3, extra: false });
  assert.deepEqual(
    b.rows().map((r) => [r.ts - H, r.code]),
    [
      [500, 0],
      [1000, 3],
      [2000, 0],
      [3000, 4],
    ],
  );
  assert.equal(b.count, 6, 'rows appended');
  assert.equal(b.lastTs, H + 3000);
});

test('an hour of one-minute url rows takes a few KB, far less than the rows as objects', () => {
  const b = new RowBuffer(H);
  const us = (ms: number) => Math.round(ms * 1000) / 1000; // how the probes round their timings
  for (let i = 0; i < 60; i++) {
    b.append({
      ts: H + i * 60_000 + 17,
      code: 0,
      resp: Math.fround(1.234 + i),
      extra: false,
      metrics: {
        dnsMs: 0,
        connectMs: us(0.311 + i / 1000),
        ttfbMs: us(0.9 + i / 1000),
        totalMs: us(1.234 + i),
        redirectCount: 0,
        statusCode: 200,
        bodyBytes: 8,
      },
    });
  }
  assert.equal(b.rows().length, 60);
  assert.ok(b.usedBytes < 60 * 25, `${b.usedBytes} B for 60 rows`);
  // Grown once to the pace's projection for the hour, not by steps: little slack at the end.
  assert.ok(b.capacityBytes <= b.usedBytes * 1.1 + 32, `capacity ${b.capacityBytes} B for ${b.usedBytes} B used`);
  const hinted = new RowBuffer(H, 1500);
  hinted.append({ ts: H, code: 0, resp: 1, extra: false });
  assert.equal(hinted.capacityBytes, 1500, "a hint (the previous hour's size) is the first allocation");
});

test('at most 255 metric names per hour (indexes past 63 take an extra byte); repeated values round-trip', () => {
  const b = new RowBuffer(H);
  const metrics: Record<string, number> = {};
  for (let i = 0; i < 300; i++) metrics[`m${i}`] = i % 7 === 0 ? i + 0.5 : i;
  b.append({ ts: H, code: 0, resp: 1, extra: false, metrics });
  b.append({ ts: H + 1, code: 0, resp: 1, extra: false, metrics: { ...metrics, m100: -1, m250: NaN } });
  const [first, second] = b.rows();
  const kept = Object.fromEntries(Object.entries(metrics).slice(0, 255));
  assert.deepEqual(first!.metrics, kept);
  assert.deepEqual(second!.metrics, { ...kept, m100: -1, m250: NaN });
});

test('names and origins first seen mid-hour extend the interned lists: values, repeats (SAME) and origins round-trip', () => {
  const rows: RawRow[] = [
    { ts: H + 1, code: 0, resp: 1, extra: false, origin: 3, metrics: { a: 1 } },
    { ts: H + 2, code: 0, resp: 1, extra: false, origin: 5, metrics: { a: 1, b: 2.5 } },
    // b and a repeat their previous values (written as SAME), c is new; NaN never equals itself (never SAME).
    { ts: H + 3, code: 1, resp: 2, extra: false, origin: 3, metrics: { b: 2.5, c: NaN, a: 1 } },
    { ts: H + 4, code: 1, resp: 2, extra: false, metrics: { c: NaN, d: 0 } },
    { ts: H + 5, code: 0, resp: 3, extra: true, origin: 9, metrics: { d: 7, a: 2 } },
  ];
  assert.deepEqual(RowBuffer.of(H, rows).rows(), rows);
});
