/**
 * series-state.ts: the latest status a series reports after results with and without a message or an origin (the
 * latest object is updated in place when its fields stay the same, decision 170, and must never keep a stale field).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyRecord, chunkAt, dropChunks, newSeries, replayRow } from './series-state.js';
import { STATUS_CODE } from './types.js';

const HOUR = 1_800_000_000_000 - (1_800_000_000_000 % 3_600_000);

test('the latest status follows each result: updated in place while its fields stay, replaced when they change', () => {
  const s = newSeries('url', 'm');
  applyRecord(s, { ts: HOUR + 1000, status: 'OK', responseTimeMs: 5 }, 7);
  const first = s.latest;
  applyRecord(s, { ts: HOUR + 61_000, status: 'MINOR', responseTimeMs: 9 }, 7);
  assert.equal(s.latest, first, 'same fields: the same object');
  assert.deepEqual(s.latest, {
    dbname: 'url',
    name: 'm',
    ts: HOUR + 61_000,
    status: 'MINOR',
    responseTimeMs: 9,
    originId: 7,
  });
  applyRecord(s, { ts: HOUR + 121_000, status: 'DOWN', responseTimeMs: 0, message: 'refused' }, 7);
  assert.equal(s.latest?.message, 'refused');
  applyRecord(s, { ts: HOUR + 181_000, status: 'OK', responseTimeMs: 4 });
  assert.deepEqual(s.latest, { dbname: 'url', name: 'm', ts: HOUR + 181_000, status: 'OK', responseTimeMs: 4 });
  // A followed row (another instance's result) with an origin, then an older one: the latest stays the newest.
  replayRow(s, { ts: HOUR + 241_000, code: STATUS_CODE.CRITICAL, resp: 12, extra: false, origin: 3 });
  assert.deepEqual(s.latest, {
    dbname: 'url',
    name: 'm',
    ts: HOUR + 241_000,
    status: 'CRITICAL',
    responseTimeMs: 12,
    originId: 3,
  });
  replayRow(s, { ts: HOUR + 200_000, code: STATUS_CODE.OK, resp: 1, extra: false, origin: 3 });
  assert.equal(s.latest?.status, 'CRITICAL');
  assert.equal(s.lastTs, HOUR + 241_000);
});

test('each hour is one chunk, in the order the hours came; dropChunks removes the picked ones and keeps the order', () => {
  const s = newSeries('url', 'm');
  applyRecord(s, { ts: HOUR + 1000, status: 'OK', responseTimeMs: 1 });
  applyRecord(s, { ts: HOUR + 3_601_000, status: 'OK', responseTimeMs: 2 });
  applyRecord(s, { ts: HOUR + 2000, status: 'OK', responseTimeMs: 3 }); // a late row of the first hour
  applyRecord(s, { ts: HOUR + 7_201_000, status: 'OK', responseTimeMs: 4 });
  assert.deepEqual(
    s.chunks.map((c) => [c.hour - HOUR, c.buf.count]),
    [
      [0, 2],
      [3_600_000, 1],
      [7_200_000, 1],
    ],
  );
  assert.equal(chunkAt(s, HOUR + 3_600_000), s.chunks[1]);
  assert.equal(chunkAt(s, HOUR + 10_800_000), undefined);
  dropChunks(s, (c) => c.hour === HOUR + 3_600_000);
  assert.deepEqual(
    s.chunks.map((c) => c.hour - HOUR),
    [0, 7_200_000],
  );
  dropChunks(s, () => true);
  assert.equal(s.chunks.length, 0);
  applyRecord(s, { ts: HOUR + 7_202_000, status: 'OK', responseTimeMs: 5 });
  assert.deepEqual(
    s.chunks.map((c) => [c.hour - HOUR, c.buf.count]),
    [[7_200_000, 1]],
  );
});
