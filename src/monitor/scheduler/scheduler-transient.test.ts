/**
 * Transient entries (UpsertOptions.transient, decision 184): a cluster member keeps no scheduler entry for a monitor
 * of a shard held elsewhere. A disabled transient upsert creates nothing and drops an idle entry; an entry with a run
 * queued or running stays until that run ends; describe() answers for a monitor with no entry what a disabled
 * entry's info() would. Simulated time (clock.fake.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createFakeClock } from './clock.fake.js';
import { computeOffsetMs, parseSchedule } from './schedule.js';
import { createScheduler } from './scheduler.js';

const T0 = Date.UTC(2025, 0, 6, 8, 0, 0);
const oneMin = parseSchedule('1MIN');

function setup(runMs: number) {
  const clock = createFakeClock(T0);
  const runs: string[] = [];
  const sched = createScheduler<string>({
    clock,
    log: pino({ level: 'silent' }),
    run: async (id) => {
      runs.push(id);
      await clock.sleep(runMs);
      return `ran ${id}`;
    },
  });
  sched.start();
  return { sched, clock, runs };
}

test('a disabled transient upsert keeps no entry, and drops an idle one', () => {
  const { sched } = setup(0);
  sched.upsert('elsewhere', oneMin, { enabled: false, transient: true });
  assert.equal(sched.has('elsewhere'), false, 'no entry is created');
  assert.equal(sched.stats().monitors, 0);
  sched.upsert('held', oneMin, { enabled: true });
  sched.upsert('held', oneMin, { enabled: false, transient: true });
  assert.equal(sched.has('held'), false, 'an idle entry is dropped');
  assert.deepEqual([sched.stats().monitors, sched.stats().enabled], [0, 0]);
  sched.upsert('held', oneMin, { enabled: true, transient: true });
  assert.equal(sched.has('held'), true, 'an enabled entry is kept, transient or not');
  assert.equal(sched.stats().enabled, 1);
});

test('an entry whose run is queued or running stays until that run ends, then goes', async () => {
  const { sched, clock, runs } = setup(5_000);
  sched.upsert('m', oneMin, { enabled: false });
  const run = sched.runNow('m');
  sched.upsert('m', oneMin, { enabled: false, transient: true });
  assert.equal(sched.has('m'), true, 'kept while its run is queued');
  await clock.advance(1_000);
  assert.deepEqual(runs, ['m']);
  assert.equal(sched.info('m')?.running, true);
  const joined = sched.runNow('m');
  await clock.advance(5_000);
  assert.deepEqual([await run, await joined, runs], ['ran m', 'ran m', ['m']], 'a second run now joins the first');
  assert.equal(sched.has('m'), false, 'dropped when the run ended');
  assert.equal(sched.stats().monitors, 0);
  await clock.advance(3 * 60_000);
  assert.deepEqual(runs, ['m'], 'never scheduled');
});

test('an entry made non-transient again (its shard won back) is kept after its run', async () => {
  const { sched, clock, runs } = setup(5_000);
  sched.upsert('m', oneMin, { enabled: false });
  const run = sched.runNow('m');
  sched.upsert('m', oneMin, { enabled: false, transient: true });
  sched.upsert('m', oneMin, { enabled: true });
  await clock.advance(6_000);
  await run;
  assert.equal(sched.has('m'), true);
  await clock.advance(2 * 60_000);
  assert.ok(runs.length >= 3, `scheduled again: ${runs.length} runs`);
});

test('describe() gives a monitor with no entry what a disabled entry would show', () => {
  const { sched } = setup(0);
  const cron = parseSchedule('5MIN', '*/5 * * * *', { timezone: 'Europe/Berlin' });
  sched.upsert('m', cron, { enabled: false });
  assert.deepEqual(sched.describe('m', cron), sched.info('m'));
  sched.upsert('p', oneMin, { enabled: false });
  assert.deepEqual(sched.describe('p', oneMin), sched.info('p'));
  assert.equal(sched.has('q'), false);
  assert.equal(sched.describe('q', oneMin).offsetMs, computeOffsetMs('q', oneMin), "the holder's offset");
});
