import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoginThrottle } from './throttle.js';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('10 failures within the window block the key for 30 s; 9 do not', () => {
  const c = clock();
  const th = new LoginThrottle({ now: c.now });
  for (let i = 0; i < 9; i++) th.fail(['u:a']);
  assert.equal(th.blockedForS(['u:a']), 0);
  th.fail(['u:a']);
  assert.equal(th.blockedForS(['u:a']), 30);
  c.advance(29_001);
  assert.equal(th.blockedForS(['u:a']), 1, 'rounded up to whole seconds');
  c.advance(1_000);
  assert.equal(th.blockedForS(['u:a']), 0);
});

test('failures older than the window do not count', () => {
  const c = clock();
  const th = new LoginThrottle({ now: c.now, windowMs: 60_000 });
  for (let i = 0; i < 9; i++) th.fail(['u:a']);
  c.advance(60_000);
  th.fail(['u:a']);
  assert.equal(th.blockedForS(['u:a']), 0);
});

test('keys are independent; the longest block of the given keys wins; success clears a key', () => {
  const c = clock();
  const th = new LoginThrottle({ now: c.now, maxFailures: 3, blockMs: 10_000 });
  for (let i = 0; i < 3; i++) th.fail(['u:a', 'c:1']);
  assert.equal(th.blockedForS(['u:b']), 0);
  assert.equal(th.blockedForS(['u:b', 'c:1']), 10);
  c.advance(4_000);
  for (let i = 0; i < 3; i++) th.fail(['u:b']);
  assert.equal(th.blockedForS(['u:b', 'c:1']), 10);
  th.fail(['u:c']);
  th.fail(['u:c']);
  th.succeed('u:c');
  th.fail(['u:c']);
  assert.equal(th.blockedForS(['u:c']), 0, 'success reset the count');
});

test('a block restarts counting afterwards', () => {
  const c = clock();
  const th = new LoginThrottle({ now: c.now, maxFailures: 2, blockMs: 1_000 });
  th.fail(['k']);
  th.fail(['k']);
  assert.equal(th.blockedForS(['k']), 1);
  c.advance(1_000);
  th.fail(['k']);
  assert.equal(th.blockedForS(['k']), 0);
  th.fail(['k']);
  assert.equal(th.blockedForS(['k']), 1);
});

test('many distinct keys are swept without losing active blocks', () => {
  const c = clock();
  const th = new LoginThrottle({ now: c.now, maxFailures: 1, blockMs: 600_000, windowMs: 1_000 });
  th.fail(['blocked']);
  c.advance(2_000);
  for (let i = 0; i < 50_001; i++) th.fail([`x${i}`]);
  assert.ok(th.blockedForS(['blocked']) > 0);
});
