import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../errors.js';
import { LoginLimiter } from './throttle.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}
const is429 = (e: unknown) => e instanceof AppError && e.status === 429;
const k = (key: string, maxFailures = 10) => ({ key, maxFailures });

test('attempts count when reserved: the 10th is allowed and blocks the key for 30 s; the 11th is refused', () => {
  const c = clock();
  const l = new LoginLimiter({ now: c.now });
  for (let i = 0; i < 10; i++) l.reserve([k('p:a')]);
  assert.throws(() => l.reserve([k('p:a')]), is429);
  assert.equal(l.blockedForS(['p:a']), 30);
  c.advance(29_001);
  assert.equal(l.blockedForS(['p:a']), 1, 'rounded up to whole seconds');
  c.advance(1_000);
  assert.equal(l.blockedForS(['p:a']), 0);
});

test('attempts older than the window do not count; keys have their own maxima', () => {
  const c = clock();
  const l = new LoginLimiter({ now: c.now, windowMs: 60_000 });
  for (let i = 0; i < 9; i++) l.reserve([k('p:a'), k('u:a', 100)]);
  c.advance(60_000);
  l.reserve([k('p:a'), k('u:a', 100)]);
  assert.equal(l.blockedForS(['p:a', 'u:a']), 0);
});

test('a success takes its attempt back and clears the pair', () => {
  const c = clock();
  const l = new LoginLimiter({ now: c.now });
  for (let i = 0; i < 9; i++) l.reserve([k('p:a'), k('c:1', 30)]);
  const r = l.reserve([k('p:b'), k('c:1', 30)]);
  l.succeed(r, 'p:b');
  for (let i = 0; i < 20; i++) l.reserve([k(`p:x${i}`), k('c:1', 30)]);
  assert.equal(l.blockedForS(['c:1']), 0, '9 + 20 failures: the success did not count');
  l.reserve([k('p:y'), k('c:1', 30)]);
  assert.equal(l.blockedForS(['c:1']), 30);
});

test('at most maxConcurrent checks run at once; beyond the queue: 429', async () => {
  const l = new LoginLimiter({ maxConcurrent: 2, maxQueued: 3 });
  let running = 0;
  let peak = 0;
  const check = async () => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 10));
    running--;
    return true;
  };
  const results = await Promise.allSettled(Array.from({ length: 6 }, () => l.withVerifySlot(check)));
  assert.equal(peak, 2);
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
  assert.ok(results.some((r) => r.status === 'rejected' && is429(r.reason)));
  assert.equal(await l.withVerifySlot(check), true, 'slots are given back');
});
