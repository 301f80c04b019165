/**
 * The chunk codec's origins (result-codec.ts version 2): each row's origin id survives encode/decode and the in-memory
 * row buffer, with up to 7 origins inline and more through the escape; a version-1 chunk (and a WAL record embedding
 * one) still decodes, with every origin unknown; one origin costs a few bytes per chunk and none per row.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteWriter, decodeChunk, encodeChunk, type RawRow } from './result-codec.js';
import { RowBuffer } from './row-buffer.js';
import { mergeRows } from './series-state.js';
import { decodeWalRecord, encodeWalRecord } from './history-wal.js';

const HOUR = Date.UTC(2026, 0, 10, 12);
const MIN = 60_000;

function rows(n: number, origin: (i: number) => number | undefined): RawRow[] {
  return Array.from({ length: n }, (_, i) => {
    const r: RawRow = { ts: HOUR + i * MIN, code: i % 5, resp: 10 + i, extra: i % 4 === 0 };
    if (i % 3 === 0) r.metrics = { a: i, b: i / 2 };
    const o = origin(i);
    if (o !== undefined) r.origin = o;
    return r;
  });
}

/** A version-1 chunk as the old encoder wrote it (no origin table). */
function encodeV1(hour: number, list: readonly RawRow[]): Buffer {
  const w = new ByteWriter();
  w.u8(1);
  w.varint(list.length);
  w.u8(0);
  let prev = hour;
  for (const r of list) {
    w.varint(r.ts - prev);
    prev = r.ts;
    w.u8((r.code & 7) | (r.extra ? 8 : 0));
    w.f32(r.resp);
  }
  return w.bytes();
}

test('each row keeps its origin: one origin, mixed with unknown, and more than 7 in one hour (escape)', () => {
  const cases: Array<[string, (i: number) => number | undefined]> = [
    ['one origin', () => 4242],
    ['two writers and unknown rows', (i) => (i % 3 === 0 ? undefined : i % 3 === 1 ? 7 : 16_383)],
    ['twelve origins', (i) => 100 + (i % 12)],
    ['ids beyond the hash space', (i) => 20_000 + (i % 9) * 1_000_000],
  ];
  for (const [what, origin] of cases) {
    const list = rows(60, origin);
    assert.deepEqual(decodeChunk(HOUR, encodeChunk(HOUR, list)), list, what);
    assert.deepEqual(RowBuffer.of(HOUR, list).rows(), list, `${what} (row buffer)`);
  }
});

test('one origin costs 3 bytes per chunk and none per row; up to 7 none per row either', () => {
  const plain = (list: RawRow[]) => list.map(({ metrics: _m, ...r }) => r);
  const v1 = encodeV1(HOUR, plain(rows(60, () => undefined))).length;
  assert.equal(encodeChunk(HOUR, plain(rows(60, () => 4242))).length, v1 + 3, 'count byte + 2-byte id');
  const none = encodeChunk(
    HOUR,
    rows(60, () => undefined),
  ).length;
  const seven = encodeChunk(
    HOUR,
    rows(60, (i) => 1 + (i % 7)),
  ).length;
  assert.equal(seven, none + 7, '7 origins (1-byte ids): the table only');
  const eight = encodeChunk(
    HOUR,
    rows(64, (i) => 1 + (i % 8)),
  ).length;
  const eightNone = encodeChunk(
    HOUR,
    rows(64, () => undefined),
  ).length;
  assert.equal(eight, eightNone + 8 + 8, "the 8th origin's 8 rows pay one escape byte each");
});

test('a version-1 chunk decodes with every origin unknown, and merges with version-2 rows', () => {
  const old = rows(10, () => undefined).map(({ metrics: _m, ...r }) => r);
  const decoded = decodeChunk(HOUR, encodeV1(HOUR, old));
  assert.deepEqual(decoded, old);
  assert.ok(decoded.every((r) => !('origin' in r)));
  const fresh = rows(20, () => 9).slice(10);
  const merged = mergeRows(decoded, fresh);
  assert.deepEqual(decodeChunk(HOUR, encodeChunk(HOUR, merged)), merged, 'unknown rows stay unknown beside known');
});

test('a WAL record embedding version-1 chunks (format 2) still decodes; a new one carries the origin', () => {
  const now = decodeWalRecord(encodeWalRecord([{ db: 'url', name: 'n', row: { ...rows(1, () => 77)[0]!, ts: HOUR } }]));
  assert.equal(now[0]?.row.origin, 77);
  const w = new ByteWriter();
  const chunk = encodeV1(0, [{ ts: HOUR, code: 0, resp: 5, extra: false }]);
  w.u8(0); // dbIndex 0
  w.varint(3);
  w.raw(Buffer.from('old'));
  w.varint(chunk.length);
  w.raw(chunk);
  const [row] = decodeWalRecord(w.bytes());
  assert.deepEqual(row?.row, { ts: HOUR, code: 0, resp: 5, extra: false });
});

test('mergeRows (two writers of one hour) keeps each row its origin; the memory row wins a shared ts', () => {
  const stored = rows(30, () => 11);
  const mem = rows(40, () => 22).slice(20);
  const merged = mergeRows(stored, mem);
  assert.equal(merged.length, 40);
  assert.deepEqual(
    merged.map((r) => r.origin),
    [...Array<number>(20).fill(11), ...Array<number>(20).fill(22)],
  );
  assert.deepEqual(RowBuffer.of(HOUR, merged).rows(), merged);
});
