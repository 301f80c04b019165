import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AppError } from '../../../core/errors.js';
import { checkUserRegex, compileUserRegex, createRegexRunner } from './safe-regex.js';

const run = createRegexRunner();
after(() => run.close());

describe('safe regex: syntax', () => {
  it('refuses what cannot run in linear time, naming the field and saying what to write instead', () => {
    const cases: [string, RegExp][] = [
      ['(a)\\1', /backreferences .* match the repeated text explicitly/],
      ['(?<x>a)\\k<x>', /backreferences/],
      ['foo(?=bar)', /lookahead .* capture group/],
      ['foo(?!bar)', /lookahead/],
      ['(?<=v)\\d+', /lookbehind .* capture group/],
      ['(?<!v)\\d+', /lookbehind/],
      ['a{1001}', /repeat counts are limited to 1000/],
      ['(a{1000}){1000}', /repeat/],
      ['[\\b]', /\\x08/],
      ['(', /missing closing/],
      ['x'.repeat(5000), /longer than 4096/],
    ];
    for (const [p, msg] of cases) {
      assert.throws(
        () => compileUserRegex(p, 'pattern'),
        (e: unknown) => e instanceof AppError && e.field === 'pattern' && msg.test(e.message),
        p,
      );
    }
  });

  it('accepts JavaScript patterns the product uses and RE2 inline flags; reports groups', () => {
    const p = compileUserRegex('"temp":\\s*(?<t>\\d+)');
    assert.deepEqual(p.groupNames, ['t']);
    assert.equal(p.groupCount, 1);
    for (const ok of ['<state>(?<s>[^<]+)</state>', '[^]+', '\\u00e9\\x41\\cM', '(?i)hello', '(?P<v>\\d+)', '\\/a'])
      assert.ok(checkUserRegex(ok).ok, ok);
  });
});

describe('safe regex: matching (in the worker)', () => {
  it('returns groups, named groups and the UTF-16 index', async () => {
    const r = await run.exec('(?<k>\\w+)=(\\d+)', 'é a=12 b=3');
    assert.ok(r.ok);
    assert.deepEqual(r.match?.groups, ['a=12', 'a', '12']);
    assert.deepEqual(r.match?.named, { k: 'a' });
    assert.equal(r.match?.index, 2);
  });

  it('no match → null; optional group not taking part → undefined; test() finds', async () => {
    const none = await run.exec('zzz', 'abc');
    assert.ok(none.ok && none.match === null);
    const opt = await run.exec('a(b)?c', 'ac');
    assert.ok(opt.ok);
    assert.deepEqual(opt.match?.groups, ['ac', undefined]);
    assert.deepEqual(await run.test('b+', 'abbc'), { ok: true, found: true });
    assert.deepEqual(await run.test('(?i)HELLO', 'say hello'), { ok: true, found: true });
  });

  it('keeps JavaScript meaning of "." and \\s: CRLF bodies extract the same value', async () => {
    const r = await run.exec('Status: (.+)', 'Status: OK\r\nX: y');
    assert.ok(r.ok);
    assert.equal(r.match?.groups[1], 'OK');
    const nbsp = await run.exec('Total:\\s+(\\S+)', 'Total:\u00a0\u00a042');
    assert.ok(nbsp.ok);
    assert.equal(nbsp.match?.groups[1], '42');
    const cls = await run.exec('[\\S]+', '  \u00a0ab😀c ');
    assert.ok(cls.ok);
    assert.equal(cls.match?.match, 'ab😀c');
  });

  it('catastrophic patterns for a backtracking engine finish with the right answer', async () => {
    const evil = 'a'.repeat(100_000) + '!';
    assert.deepEqual(await run.test('^(a+)+$', evil), { ok: true, found: false });
    const e2 = await run.exec('(x+x+)+y', 'x'.repeat(50_000));
    assert.ok(e2.ok && e2.match === null);
  });

  it('a match past the hard bound stops its worker; the next job runs on a fresh one', async () => {
    const tight = createRegexRunner({ timeoutMs: 1_000 });
    try {
      // (.*a){20} with captures over 1 MiB is linear but slow (NFA, 20 states per char: ~7 s alone on this machine).
      const slow = await tight.exec('(.*a){20}', 'a'.repeat(1 << 20));
      assert.equal(slow.ok, false);
      assert.match(!slow.ok ? slow.error : '', /longer than 1000 ms and was stopped/);
      const next = await tight.exec('a+', 'baaa');
      assert.ok(next.ok && next.match?.match === 'aaa');
    } finally {
      await tight.close();
    }
  });

  it('a stored pattern the engine refuses runs as an error naming the reason (no throw)', async () => {
    const r = await run.exec('(a)\\1', 'aa');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /pattern cannot run: backreferences/);
  });

  it('texts are cut to the input cap', async () => {
    const small = createRegexRunner({ maxInputChars: 10 });
    try {
      assert.deepEqual(await small.test('needle', 'x'.repeat(20) + 'needle'), { ok: true, found: false });
      assert.deepEqual(await small.test('needle', 'needle'), { ok: true, found: true });
    } finally {
      await small.close();
    }
  });

  it('a job aborted while waiting leaves the queue', async () => {
    const one = createRegexRunner({ workers: 1, timeoutMs: 2_000 });
    try {
      const ac = new AbortController();
      const first = one.exec('(.*a){20}', 'a'.repeat(1 << 18));
      const second = one.test('a', 'a', ac.signal);
      ac.abort();
      assert.deepEqual(await second, { ok: false, error: 'aborted before the pattern ran' });
      await first;
    } finally {
      await one.close();
    }
  });
});
