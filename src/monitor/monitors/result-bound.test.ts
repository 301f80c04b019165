/** result-bound: small results untouched, large arrays and strings cut with a marker, the bound always held. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundResult, MAX_RESULT_BYTES } from './result-bound.js';

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
