import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createSystemClock } from './clock.js';
import { computeOffsetMs, parseSchedule } from './schedule.js';
import { createScheduler } from './scheduler.js';

// Real time: the one test that waits. A 1MIN monitor's first due is at most 60 s + its offset (< 30 s) away.
test('a 1MIN monitor fires on its own on the real clock', { timeout: 120_000 }, async () => {
  const spec = parseSchedule('1MIN');
  const id = 'realtime-probe';
  const ran = new Promise<{ dueMs: number; startMs: number }>((resolve) => {
    const sched = createScheduler({
      clock: createSystemClock(),
      log: pino({ level: 'silent' }),
      run: async (_id, dueMs, ctx) => {
        resolve({ dueMs, startMs: ctx.startMs });
        void sched.stop();
      },
    });
    sched.upsert(id, spec, { enabled: true });
    sched.start();
  });
  // The scheduler's timers are unref'd; keep the process alive while waiting.
  const keepAlive = setInterval(() => undefined, 1000);
  try {
    const { dueMs, startMs } = await ran;
    assert.equal(dueMs % 60_000, computeOffsetMs(id, spec), 'due at a minute boundary + the monitor offset');
    assert.ok(startMs >= dueMs, 'never early');
  } finally {
    clearInterval(keepAlive);
  }
});
