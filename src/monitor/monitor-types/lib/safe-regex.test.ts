import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../../core/errors.js';
import { compileUserRegex, createRegexRunner } from './safe-regex.js';

describe('safe regex', () => {
  it('returns groups and named groups', () => {
    const r = createRegexRunner().exec('(?<k>\\w+)=(\\d+)', 'x a=12 b=3');
    assert.ok(r.ok);
    assert.deepEqual(r.match?.groups, ['a=12', 'a', '12']);
    assert.deepEqual(r.match?.named, { k: 'a' });
    assert.equal(r.match?.index, 2);
  });

  it('no match → null; optional group not taking part → undefined', () => {
    const run = createRegexRunner();
    const none = run.exec('zzz', 'abc');
    assert.ok(none.ok && none.match === null);
    const opt = run.exec('a(b)?c', 'ac');
    assert.ok(opt.ok);
    assert.deepEqual(opt.match?.groups, ['ac', undefined]);
  });

  it('a catastrophic pattern is stopped by the bound: (a+)+$ on 100 a + "!" returns (2^100 steps otherwise)', () => {
    const run = createRegexRunner({ timeoutMs: 100 });
    const r = run.exec('(a+)+$', 'a'.repeat(100) + '!');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /longer than 100 ms/);
    const after = run.exec('a+', 'aaa');
    assert.ok(after.ok && after.match?.match === 'aaa', 'the runner still works after a timeout');
  });

  it('compileUserRegex rejects a bad pattern with 400 naming the field', () => {
    assert.throws(
      () => compileUserRegex('(', 'pattern'),
      (e: unknown) => e instanceof AppError && e.field === 'pattern',
    );
    assert.ok(compileUserRegex('a+') instanceof RegExp);
  });
});
