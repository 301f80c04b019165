import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createFakeClock } from './clock.fake.js';
import { parseSchedule } from './schedule.js';
import { createScheduler } from './scheduler.js';

const MIN = 60_000;

test('10,000 monitors at 1MIN: every one dispatched exactly once per minute, none late beyond the batch window', async () => {
  const T0 = Date.UTC(2025, 0, 6, 8, 0, 0);
  const clock = createFakeClock(T0);
  const N = 10_000;
  const MINUTES = 5;
  const perMinute = Array.from({ length: MINUTES }, () => new Uint8Array(N));
  let running = 0;
  let maxRunning = 0;
  const sched = createScheduler({
    clock,
    log: pino({ level: 'silent' }),
    concurrencyLimit: 500,
    run: async (id, dueMs) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      const minute = Math.floor((dueMs - T0) / MIN);
      if (minute < MINUTES) perMinute[minute]![Number(id.slice(4))]!++;
      await clock.sleep(200); // a 200 ms check
      running--;
    },
  });
  const spec = parseSchedule('1MIN');
  for (let i = 0; i < N; i++) sched.upsert(`mon-${i}`, parseSchedule('1MIN'), { enabled: true });
  sched.upsert('mon-off', spec, { enabled: false });
  sched.start();
  await clock.advance(MINUTES * MIN);
  for (let m = 0; m < MINUTES; m++) {
    const counts = perMinute[m]!;
    assert.ok(
      counts.every((n) => n === 1),
      `minute ${m}: every monitor ran exactly once`,
    );
  }
  const s = sched.stats();
  assert.equal(s.dueCount, N * MINUTES);
  assert.equal(s.startedCount, N * MINUTES, '100 % of due checks started');
  assert.equal(s.skippedOverlap, 0);
  assert.ok(maxRunning <= 500);
  // Fake clock: lateness is only the dispatcher's batch window (default 100 ms), never more.
  assert.ok(s.lateness.maxMs <= 100, `lateness max ${s.lateness.maxMs} ms`);
  assert.ok(s.lateness.p50Ms <= 60, `lateness p50 ${s.lateness.p50Ms} ms: about half the window`);
  const stopping = sched.stop();
  await clock.advance(1000);
  await stopping;
});
