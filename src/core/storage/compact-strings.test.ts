/**
 * compact-strings.ts: the values are unchanged (deeply, every code unit), buffers are left alone, and the pool stops
 * growing at its size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pack, unpack } from 'msgpackr';
import { compactStrings, StringPool } from './compact-strings.js';

test('a decoded record keeps every value, nested ones included; buffers are left alone', () => {
  const record = {
    name: 'a-monitor-with-a-long-name',
    type: 'url',
    createdMs: 1_700_000_000_000,
    config: { url: 'https://example.com/a/long/path?q=1', state: 'on', sched: '1MIN' },
    list: ['short', 'a string longer than thirteen', { deep: ['é-ü-ß-日本語-long-enough'] }],
    bytes: Buffer.from('raw bytes stay as they are'),
    none: null,
    flag: true,
  };
  const decoded = unpack(pack(record)) as typeof record;
  const pool = new StringPool();
  assert.equal(compactStrings(decoded, pool), decoded);
  assert.deepEqual(decoded, record);
  assert.ok(Buffer.isBuffer(decoded.bytes));
});

test('every code unit is kept, a lone surrogate included', () => {
  const odd = 'x\ud800y, long enough to be copied';
  const low = '\udfff and more than 13 characters';
  const value = { odd, list: [low] };
  compactStrings(value, new StringPool());
  assert.equal(value.odd, odd);
  assert.equal(value.odd.charCodeAt(1), 0xd800);
  assert.equal(value.list[0], low);
});

test('the pool takes short strings only, and no more than its size', () => {
  const pool = new StringPool(3);
  for (const s of ['on', 'off', '1MIN', '5MIN', 'default', 'a string longer than thirteen']) pool.keep(s);
  assert.equal(pool.size, 3);
  assert.equal(pool.keep('5MIN'), '5MIN');
  assert.equal(pool.size, 3);
});
