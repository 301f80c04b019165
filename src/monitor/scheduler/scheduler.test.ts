import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { AppError } from '../../core/errors.js';
import { createFakeClock, type FakeClock } from './clock.fake.js';
import { computeOffsetMs, parseSchedule } from './schedule.js';
import { createScheduler, type RunContext, type SchedulerOptions } from './scheduler.js';

const MIN = 60_000;
const T0 = Date.UTC(2025, 0, 6, 8, 0, 0); // a minute boundary
const log = pino({ level: 'silent' });

interface Call {
  id: string;
  dueMs: number;
  ctx: RunContext;
}

/** A scheduler on a fake clock whose run function records calls, concurrency and overlap. */
function setup(
  o: Partial<SchedulerOptions<string>> & { runMs?: number | ((id: string) => number) } = {},
  clock: FakeClock = createFakeClock(T0),
) {
  const calls: Call[] = [];
  const active = new Set<string>();
  let maxActive = 0;
  let overlaps = 0;
  const runMs = o.runMs ?? 0;
  const sched = createScheduler<string>({
    clock,
    log,
    concurrencyLimit: 1000,
    ...o,
    run: async (id, dueMs, ctx) => {
      if (active.has(id)) overlaps++;
      active.add(id);
      maxActive = Math.max(maxActive, active.size);
      calls.push({ id, dueMs, ctx });
      const ms = typeof runMs === 'function' ? runMs(id) : runMs;
      if (ms > 0) await clock.sleep(ms);
      active.delete(id);
      return `result:${id}`;
    },
  });
  return { sched, clock, calls, maxActive: () => maxActive, overlaps: () => overlaps, active };
}

const oneMin = parseSchedule('1MIN');

/** stop() awaits in-flight runs, which sleep on the fake clock: keep time moving until it resolves. */
async function shutdown(sched: { stop(): Promise<void> }, clock: FakeClock): Promise<void> {
  let done = false;
  const p = sched.stop().then(() => (done = true));
  for (let i = 0; i < 100 && !done; i++) await clock.advance(10_000);
  await p;
}

test('a 1MIN monitor runs once a minute at fire time + its offset, with lateness measured', async () => {
  const h = setup();
  h.sched.upsert('m1', oneMin, { enabled: true });
  const offset = computeOffsetMs('m1', oneMin);
  h.sched.start();
  assert.equal(h.sched.info('m1')?.nextDueMs, T0 + offset);
  await h.clock.advance(5 * MIN);
  assert.deepEqual(
    h.calls.map((c) => c.dueMs),
    [0, 1, 2, 3, 4].map((i) => T0 + i * MIN + offset),
  );
  for (const c of h.calls) {
    assert.equal(c.ctx.trigger, 'schedule');
    assert.ok(c.ctx.latenessMs >= 0 && c.ctx.latenessMs <= 5, `lateness ${c.ctx.latenessMs} within the batch window`);
  }
  const info = h.sched.info('m1');
  assert.equal(info?.offsetMs, offset);
  assert.equal(info?.spreadWindowMs, 48_000);
  assert.equal(info?.nextDueMs, T0 + 5 * MIN + offset);
  assert.equal(info?.lastDueMs, T0 + 4 * MIN + offset);
  const s = h.sched.stats();
  assert.equal(s.dueCount, 5);
  assert.equal(s.startedCount, 5);
  assert.equal(s.completedCount, 5);
  assert.equal(s.lateness.count, 5);
  await shutdown(h.sched, h.clock);
});

test('disable, re-enable and remove apply live; a disabled monitor never runs', async () => {
  const h = setup();
  h.sched.upsert('a', oneMin, { enabled: true });
  h.sched.upsert('off', oneMin, { enabled: false });
  h.sched.start();
  await h.clock.advance(2 * MIN);
  assert.equal(h.calls.filter((c) => c.id === 'a').length, 2);
  h.sched.upsert('a', oneMin, { enabled: false });
  assert.equal(h.sched.info('a')?.nextDueMs, null);
  await h.clock.advance(3 * MIN);
  assert.equal(h.calls.filter((c) => c.id === 'a').length, 2, 'no runs while disabled');
  h.sched.upsert('a', oneMin, { enabled: true });
  await h.clock.advance(2 * MIN);
  assert.equal(h.calls.filter((c) => c.id === 'a').length, 4, 'resumes once a minute');
  h.sched.remove('a');
  assert.equal(h.sched.info('a'), undefined);
  await h.clock.advance(3 * MIN);
  assert.equal(h.calls.filter((c) => c.id === 'a').length, 4);
  assert.equal(h.calls.filter((c) => c.id === 'off').length, 0);
  assert.equal(h.sched.stats().enabled, 0);
  await shutdown(h.sched, h.clock);
});

test('a schedule change applies live', async () => {
  const h = setup();
  h.sched.upsert('m', oneMin, { enabled: true });
  h.sched.start();
  await h.clock.advance(MIN + 1);
  const five = parseSchedule('5MIN');
  h.sched.upsert('m', five, { enabled: true });
  const offset = computeOffsetMs('m', five);
  assert.equal(h.sched.info('m')?.nextDueMs, (offset > MIN + 1 ? T0 : T0 + 5 * MIN) + offset);
  const before = h.calls.length;
  await h.clock.advance(10 * MIN);
  assert.equal(h.calls.length - before, 2, 'two 5-minute fires in 10 minutes');
  assert.ok(h.calls.slice(before).every((c) => (c.dueMs - offset) % (5 * MIN) === 0));
  await shutdown(h.sched, h.clock);
});

test('the same monitor never overlaps itself: a run longer than its interval skips, not queues, the next', async () => {
  const h = setup({ runMs: 150_000 });
  h.sched.upsert('slow', oneMin, { enabled: true });
  h.sched.start();
  await h.clock.advance(10 * MIN);
  assert.equal(h.overlaps(), 0);
  const s = h.sched.stats();
  assert.equal(s.dueCount, 10);
  assert.ok(s.startedCount >= 3 && s.startedCount <= 4, `started ${s.startedCount}`);
  assert.equal(s.skippedOverlap, s.dueCount - s.startedCount);
  for (let i = 1; i < h.calls.length; i++) assert.ok(h.calls[i]!.ctx.startMs - h.calls[i - 1]!.ctx.startMs >= 150_000);
  await shutdown(h.sched, h.clock);
});

test('the concurrency cap holds, queued runs start FIFO by due time, and setConcurrency is live', async () => {
  const h = setup({ concurrencyLimit: 5, runMs: 2000, spreadFraction: 0.5 });
  for (let i = 0; i < 200; i++) h.sched.upsert(`m${i}`, oneMin, { enabled: true });
  h.sched.start();
  await h.clock.advance(MIN);
  assert.ok(h.maxActive() <= 5, `max ${h.maxActive()}`);
  assert.equal(h.maxActive(), 5);
  const dues = h.calls.map((c) => c.dueMs);
  assert.deepEqual(
    dues,
    [...dues].sort((a, b) => a - b),
    'fair: started in due order',
  );
  assert.ok(h.sched.stats().queued > 0, 'a backlog built up (200 × 2 s on 5 slots)');
  const startedBefore = h.calls.length;
  h.sched.setConcurrency(50);
  assert.ok(h.sched.stats().running > 5, 'raising the limit starts queued runs at once');
  assert.ok(h.calls.length > startedBefore);
  await h.clock.advance(2 * MIN);
  assert.ok(h.maxActive() <= 50);
  assert.equal(h.overlaps(), 0);
  const s = h.sched.stats();
  assert.equal(s.startedCount + s.skippedOverlap + s.queued, s.dueCount);
  await shutdown(h.sched, h.clock);
});

test('per-class caps bound a weight class', async () => {
  const h = setup({ concurrencyLimit: 20, classCaps: { browser: 2 }, runMs: 10_000, spreadFraction: 0 });
  for (let i = 0; i < 10; i++) h.sched.upsert(`b${i}`, oneMin, { enabled: true, weightClass: 'browser' });
  for (let i = 0; i < 10; i++) h.sched.upsert(`u${i}`, oneMin, { enabled: true });
  let maxBrowser = 0;
  h.sched.start();
  for (let t = 0; t < 59; t++) {
    await h.clock.advance(1000);
    maxBrowser = Math.max(maxBrowser, [...h.active].filter((id) => id.startsWith('b')).length);
  }
  assert.equal(maxBrowser, 2);
  assert.equal(h.calls.filter((c) => c.id.startsWith('u')).length, 10, 'other monitors were not held back');
  await shutdown(h.sched, h.clock);
});

test('runNow runs ahead of the queue, returns the result, and joins an in-flight run', async () => {
  const h = setup({ concurrencyLimit: 1, runMs: 1000, spreadFraction: 0 });
  for (let i = 0; i < 5; i++) h.sched.upsert(`m${i}`, oneMin, { enabled: true });
  h.sched.upsert('off', oneMin, { enabled: false });
  h.sched.start();
  await h.clock.advance(1);
  assert.equal(h.calls.length, 1);
  const manual = h.sched.runNow('off');
  const joined = h.sched.runNow(h.calls[0]!.id);
  await h.clock.advance(1000);
  assert.equal(await joined, `result:${h.calls[0]!.id}`, 'joined the running run');
  assert.equal(
    h.calls[1]!.id,
    'off',
    'manual run went ahead of 4 queued scheduled runs (disabled monitors can be run by hand)',
  );
  assert.equal(h.calls[1]!.ctx.trigger, 'manual');
  await h.clock.advance(1000);
  assert.equal(await manual, 'result:off');
  const promoted = h.sched.runNow('m4');
  await h.clock.advance(2000);
  assert.equal(await promoted, 'result:m4');
  assert.deepEqual(
    h.calls.slice(0, 4).map((c) => c.id),
    ['m0', 'off', 'm1', 'm4'],
    'm4 promoted ahead of m2, m3',
  );
  assert.equal(h.calls[3]!.ctx.trigger, 'schedule', 'a queued occurrence is promoted, not duplicated');
  await h.clock.advance(5000);
  assert.equal(h.calls.filter((c) => c.id === 'm4').length, 1);
  await assert.rejects(h.sched.runNow('nope'), (e: unknown) => e instanceof AppError && e.status === 404);
  const s = h.sched.stats();
  assert.equal(s.manualCount, 1);
  assert.equal(s.startedCount, 5);
  await shutdown(h.sched, h.clock);
});

test('a failing run is counted and does not stop the schedule', async () => {
  const clock = createFakeClock(T0);
  let n = 0;
  const sched = createScheduler({
    clock,
    log,
    run: async () => {
      n++;
      throw new Error('boom');
    },
  });
  sched.upsert('x', oneMin, { enabled: true });
  sched.start();
  await clock.advance(3 * MIN);
  assert.equal(n, 3);
  assert.equal(sched.stats().failedCount, 3);
  await shutdown(sched, clock);
});

test('stop() waits for in-flight runs and drops queued ones', async () => {
  const h = setup({ concurrencyLimit: 1, runMs: 5000, spreadFraction: 0 });
  h.sched.upsert('a', oneMin, { enabled: true });
  h.sched.upsert('b', oneMin, { enabled: true });
  h.sched.start();
  await h.clock.advance(1);
  let stopped = false;
  const stopping = h.sched.stop().then(() => (stopped = true));
  await h.clock.advance(4000);
  assert.equal(stopped, false);
  await h.clock.advance(1000);
  await stopping;
  assert.equal(h.calls.length, 1);
  assert.equal(h.sched.stats().queued, 0);
  await h.clock.advance(3 * MIN);
  assert.equal(h.calls.length, 1, 'nothing runs after stop');
});

test('restart resumes: every monitor runs within its first interval, at its next fire + offset', async () => {
  const clock = createFakeClock(T0);
  const ids = Array.from({ length: 300 }, (_, i) => `r${i}`);
  const specs = ids.map((_, i) => parseSchedule(['1MIN', '5MIN', '60MIN'][i % 3]!));
  const first = setup({}, clock);
  ids.forEach((id, i) => first.sched.upsert(id, specs[i]!, { enabled: true }));
  first.sched.start();
  await clock.advance(7 * MIN);
  await shutdown(first.sched, clock);
  await clock.advance(13 * MIN + 17_345); // down for a while; restart mid-minute
  const restartMs = clock.now();
  const second = setup({}, clock);
  ids.forEach((id, i) => second.sched.upsert(id, specs[i]!, { enabled: true }));
  second.sched.start();
  await clock.advance(60 * MIN);
  ids.forEach((id, i) => {
    const firstRun = second.calls.find((c) => c.id === id);
    assert.ok(firstRun, `${id} ran after the restart`);
    const offset = computeOffsetMs(id, specs[i]!);
    const expected = (specs[i]!.nextFireAfter(restartMs - offset - 1) as number) + offset;
    assert.equal(firstRun.dueMs, expected);
    assert.ok(firstRun.dueMs - restartMs < specs[i]!.minIntervalMs, `${id} within its first interval`);
  });
});

test('a stall longer than an interval passes over missed occurrences instead of bursting them', async () => {
  const fake = createFakeClock(T0);
  let skewMs = 0;
  const clock = { ...fake, now: () => fake.now() + skewMs };
  const h = setup({ clock }, fake);
  h.sched.upsert('m', oneMin, { enabled: true });
  h.sched.start();
  await fake.advance(2 * MIN);
  assert.equal(h.calls.length, 2);
  skewMs = 5 * MIN + 10_000; // the process was frozen for 5 min 10 s
  await fake.advance(MIN);
  assert.equal(h.calls.length, 3, 'one late run, not five');
  assert.equal(h.sched.stats().missedCount, 5, 'the 5 occurrences due during the freeze after the one that ran');
  const next = h.sched.info('m')?.nextDueMs as number;
  assert.ok(next > clock.now() && next - clock.now() <= MIN);
  await shutdown(h.sched, h.clock);
});

test('disabling drops a queued occurrence; a monitor removed and re-added while running still never overlaps', async () => {
  const h = setup({ concurrencyLimit: 1, runMs: 90_000, spreadFraction: 0 });
  h.sched.upsert('a', oneMin, { enabled: true });
  h.sched.upsert('b', oneMin, { enabled: true });
  h.sched.start();
  await h.clock.advance(1);
  assert.deepEqual(
    h.calls.map((c) => c.id),
    ['a'],
  );
  assert.equal(h.sched.info('b')?.queued, true);
  h.sched.upsert('b', oneMin, { enabled: false });
  assert.equal(h.sched.stats().queued, 0);
  h.sched.remove('a');
  h.sched.upsert('a', oneMin, { enabled: true });
  assert.equal(h.sched.info('a')?.running, true, 'the run of the removed entry is still tracked');
  await h.clock.advance(MIN);
  assert.equal(h.overlaps(), 0);
  assert.deepEqual(
    h.calls.map((c) => c.id),
    ['a'],
    'the re-added monitor skipped its due while its old run was active',
  );
  await h.clock.advance(2 * MIN);
  assert.equal(h.calls.filter((c) => c.id === 'b').length, 0);
  assert.equal(h.overlaps(), 0);
  await shutdown(h.sched, h.clock);
});

test('catchUp runs the occurrence that fell due in a gap once, and never one already started here', async () => {
  const h = setup();
  h.sched.start();
  h.sched.upsert('gap', oneMin, { enabled: false });
  const offset = computeOffsetMs('gap', oneMin);
  await h.clock.advanceTo(T0 + MIN + offset + 5_000); // due T0+MIN+offset passed while disabled (another owner)
  h.sched.upsert('gap', oneMin, { enabled: true });
  h.sched.catchUp('gap', T0 + MIN + offset - 10_000);
  h.sched.catchUp('gap', T0 + MIN + offset - 10_000); // queued already: no second run
  await h.clock.flush();
  assert.deepEqual(
    h.calls.map((c) => [c.id, c.dueMs, c.ctx.trigger]),
    [['gap', T0 + MIN + offset, 'schedule']],
  );
  h.sched.catchUp('gap', T0 + MIN + offset - 10_000); // that due has run here now
  h.sched.catchUp('gap', T0 + 2 * MIN + offset - 1); // next due is in the future
  await h.clock.advanceTo(T0 + 2 * MIN + offset);
  assert.deepEqual(
    h.calls.map((c) => c.dueMs),
    [T0 + MIN + offset, T0 + 2 * MIN + offset],
  );
  await shutdown(h.sched, h.clock);
});

test('setBatchMs widens the dispatch window live: a due 150–350 ms after a tick waits for the wider gap', async () => {
  // Two 1MIN monitors whose spread offsets are 150–350 ms apart (ids found by their hash, deterministic).
  const offset = (id: string) => computeOffsetMs(id, oneMin, {});
  const ids = Array.from({ length: 5000 }, (_, i) => `w${i}`);
  let pair: [string, string] | undefined;
  for (const a of ids) {
    const b = ids.find((x) => offset(x) - offset(a) >= 150 && offset(x) - offset(a) <= 350);
    if (b) {
      pair = [a, b];
      break;
    }
  }
  assert.ok(pair, 'a pair of ids');
  const [a, b] = pair;
  const gapMs = offset(b) - offset(a);
  for (const widenTo of [undefined, 400]) {
    const h = setup();
    if (widenTo !== undefined) h.sched.setBatchMs(widenTo);
    h.sched.upsert(a, oneMin, { enabled: true });
    h.sched.upsert(b, oneMin, { enabled: true });
    h.sched.start();
    await h.clock.advance(2 * MIN);
    const late = h.calls.find((c) => c.id === b)!.ctx.latenessMs;
    if (widenTo === undefined) assert.equal(late, 0, 'default 100 ms: its own tick');
    else assert.equal(late, widenTo - gapMs, 'popped with the wider window');
    await shutdown(h.sched, h.clock);
  }
});
