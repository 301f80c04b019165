/** result-bound: small results untouched, large arrays and strings cut with a marker, the bound always held. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundResult, jsonBytesAtMost, MAX_RESULT_BYTES } from './result-bound.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

test('a normal result is returned as it is', () => {
  const details = { steps: [{ name: 'a' }], navigations: [] };
  const r = boundResult('ok', details);
  assert.equal(r.details, details);
  assert.equal(r.message, 'ok');
});

test('3,000 navigations of 10 KB are cut to the bound, head kept, with a marker', () => {
  const navigations = Array.from({ length: 3000 }, (_, i) => ({ url: `https://x/${i}${'A'.repeat(10_000)}`, step: 0 }));
  const r = boundResult('m'.repeat(10_000), { steps: [{ name: 's' }], navigations });
  assert.ok(bytes(r.details) + bytes(r.message) <= MAX_RESULT_BYTES);
  assert.ok(r.message!.length < 5000);
  const d = r.details as { navigations: { url: string }[]; steps: unknown[]; truncated: { originalBytes: number } };
  assert.ok(d.navigations.length >= 1 && d.navigations[0]!.url.startsWith('https://x/0'));
  assert.deepEqual(d.steps, [{ name: 's' }]);
  assert.ok(d.truncated.originalBytes > 30_000_000);
});

test('one huge string is cut', () => {
  const r = boundResult(undefined, { value: 'x'.repeat(1_000_000) });
  assert.ok(bytes(r.details) <= MAX_RESULT_BYTES);
  assert.ok((r.details as { truncated: unknown }).truncated);
});

test('jsonBytesAtMost is never below the exact JSON size, and gives up past its budget', () => {
  const samples: unknown[] = [
    {},
    [],
    { a: 'plain', b: 1.5, c: -1.7976931348623157e308, d: true, e: null, f: undefined, g: [undefined, () => 1] },
    { s: '\u0000\u001f"\\\n', emoji: '😀', lone: '\ud800', cjk: '漢字', nested: { deep: [[[{ x: 'y' }]]] } },
    { finalUrl: 'http://127.0.0.1:40000/t/1', redirects: [], timings: { dnsMs: 0, connectMs: 0.31 } },
    Array.from({ length: 50 }, (_, i) => ({ [`k${i}`]: 'v'.repeat(i), n: i })),
    Object.assign(Object.create({ inherited: 'x'.repeat(100) }), { own: 1 }),
  ];
  for (const v of samples) {
    const exact = bytes(v);
    assert.ok(jsonBytesAtMost(v, 1e9) >= exact, `bound below exact for ${JSON.stringify(v)}`);
  }
  assert.equal(jsonBytesAtMost({ big: 'x'.repeat(1000) }, 100), Infinity);
  assert.equal(jsonBytesAtMost({ when: new Date(0) }, 1e9), Infinity, 'toJSON: left to the exact path');
  assert.equal(jsonBytesAtMost({ n: 1n }, 1e9), Infinity, 'bigint: left to the exact path');
});

test('a result whose bound is loose (many escapes) but whose exact size fits is still returned untouched', () => {
  const details = { s: 'é'.repeat(20_000) }; // bound 120 KB, exact 40 KB
  const r = boundResult('ok', details);
  assert.equal(r.details, details);
});
