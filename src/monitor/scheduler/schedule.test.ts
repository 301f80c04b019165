import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../core/errors.js';
import {
  computeOffsetMs,
  DEFAULT_CRON_JITTER_MS,
  hashId,
  parseSchedule,
  SCHEDULE_PRESETS,
  spreadWindowMs,
} from './schedule.js';

const T0 = Date.UTC(2025, 2, 10, 13, 27, 41, 123); // a Monday, mid-minute
const MIN = 60_000;

test('presets fire on their cron boundaries (UTC)', () => {
  const cases: [string, number][] = [
    ['1MIN', 1],
    ['5MIN', 5],
    ['10MIN', 10],
    ['20MIN', 20],
    ['30MIN', 30],
    ['60MIN', 60],
  ];
  for (const [sched, periodMin] of cases) {
    const spec = parseSchedule(sched);
    assert.equal(spec.cron, SCHEDULE_PRESETS[sched]);
    assert.equal(spec.custom, false);
    assert.equal(spec.minIntervalMs, periodMin * MIN);
    let t = T0;
    for (let i = 0; i < 5; i++) {
      const next = spec.nextFireAfter(t);
      assert.ok(next !== null && next > t, `${sched} fires after ${t}`);
      const d = new Date(next);
      assert.equal(d.getUTCSeconds(), 0);
      assert.equal(d.getUTCMilliseconds(), 0);
      assert.equal(d.getUTCMinutes() % periodMin, 0, `${sched} minute ${d.getUTCMinutes()}`);
      if (i > 0) assert.equal(next - t, periodMin * MIN);
      t = next;
    }
  }
  assert.equal(
    parseSchedule('5MIN').nextFireAfter(Date.UTC(2025, 0, 1, 10, 5)),
    Date.UTC(2025, 0, 1, 10, 10),
    'strictly after a boundary',
  );
  assert.equal(parseSchedule('60MIN').nextFireAfter(Date.UTC(2025, 0, 1, 10, 59, 59, 999)), Date.UTC(2025, 0, 1, 11));
});

test('arithmetic presets agree with the same expression through croner', () => {
  for (const sched of Object.keys(SCHEDULE_PRESETS)) {
    const fast = parseSchedule(sched);
    const viaCron = parseSchedule(sched, SCHEDULE_PRESETS[sched]);
    assert.equal(viaCron.custom, true);
    // Same fire times, but not the same spec: an explicit cron gets a jitter of seconds, a preset a spread window.
    assert.notEqual(fast.key, viaCron.key, 'a preset and an equal schedCron are not shared');
    for (let t = T0, i = 0; i < 200; i++, t += 7_777_777 % (fast.minIntervalMs * 3)) {
      assert.equal(fast.nextFireAfter(t), viaCron.nextFireAfter(t), `${sched} at ${new Date(t).toISOString()}`);
    }
  }
});

test('schedCron overrides sched', () => {
  const spec = parseSchedule('5MIN', '  15  9 * *   MON-FRI ');
  assert.equal(spec.cron, '15 9 * * MON-FRI');
  assert.equal(spec.custom, true);
  assert.equal(spec.sched, '5MIN');
  assert.equal(spec.nextFireAfter(T0), Date.UTC(2025, 2, 11, 9, 15));
  assert.equal(spec.minIntervalMs, 24 * 60 * MIN, 'shortest gap between weekday fires');
  assert.equal(parseSchedule('1MIN', '').cron, '* * * * *', 'empty schedCron means no override');
  const every7 = parseSchedule('bogus', '*/7 * * * *');
  assert.equal(every7.nextFireAfter(Date.UTC(2025, 0, 1, 0, 55)), Date.UTC(2025, 0, 1, 0, 56));
  assert.equal(every7.minIntervalMs, 4 * MIN, '*/7 restarts at :00, so 56 → 00 is 4 minutes');
});

test('invalid cron and unknown sched are 400 naming the field', () => {
  for (const bad of ['61 * * * *', '* * * *', '0 0 * * * *', 'every minute', '*/0 * * * *', '0 0 30 2 *']) {
    assert.throws(
      () => parseSchedule('1MIN', bad),
      (e: unknown) => {
        assert.ok(e instanceof AppError, bad);
        assert.equal(e.status, 400);
        assert.equal(e.field, 'schedCron');
        return true;
      },
    );
  }
  assert.throws(
    () => parseSchedule('2MIN'),
    (e: unknown) => e instanceof AppError && e.status === 400 && e.field === 'sched',
  );
});

test('timezone option reads the fields in that zone', () => {
  const spec = parseSchedule('1MIN', '0 9 * * *', { timezone: 'Asia/Kolkata' });
  assert.equal(spec.nextFireAfter(Date.UTC(2025, 0, 1, 0)), Date.UTC(2025, 0, 1, 3, 30));
  const hourly = parseSchedule('60MIN', undefined, { timezone: 'Asia/Kolkata' });
  assert.equal(hourly.nextFireAfter(Date.UTC(2025, 0, 1, 0, 10)), Date.UTC(2025, 0, 1, 0, 30), 'local :00 is UTC :30');
  assert.notEqual(spec.key, parseSchedule('1MIN', '0 9 * * *').key);
});

test('offsets are stable, spread, and inside the window', () => {
  const oneMin = parseSchedule('1MIN');
  assert.equal(spreadWindowMs(oneMin), 48_000);
  assert.equal(spreadWindowMs(parseSchedule('5MIN')), 240_000);
  assert.equal(spreadWindowMs(parseSchedule('60MIN')), 300_000, 'capped at 5 minutes');
  assert.equal(spreadWindowMs(oneMin, { spreadFraction: 0.25 }), 15_000);
  assert.equal(spreadWindowMs(oneMin, { maxSpreadMs: 10_000 }), 10_000);
  assert.equal(computeOffsetMs('x', oneMin, { spreadFraction: 0 }), 0);
  const seen = new Array(48).fill(0) as number[];
  for (let i = 0; i < 48_000; i++) {
    const id = `url:monitor-${i}`;
    const off = computeOffsetMs(id, oneMin);
    assert.ok(off >= 0 && off < 48_000);
    assert.equal(off, computeOffsetMs(id, parseSchedule('1MIN')), 'stable across spec objects');
    seen[Math.floor(off / 1000)]!++;
  }
  for (const n of seen) assert.ok(n > 700 && n < 1300, `each second of the window gets ~1000 of 48,000 (got ${n})`);
  assert.equal(hashId('abc'), hashId('abc'));
  assert.notEqual(hashId('abc'), hashId('abd'));
});

test('an explicit cron runs at its time + a jitter of at most 5 s; presets keep their spread', () => {
  const hourlyCron = parseSchedule('CRON', '0 * * * *');
  const hourlyPreset = parseSchedule('60MIN');
  assert.equal(spreadWindowMs(hourlyCron), DEFAULT_CRON_JITTER_MS);
  assert.equal(spreadWindowMs(hourlyPreset), 300_000);
  assert.equal(spreadWindowMs(parseSchedule('CRON', '* * * * *')), 5_000);
  assert.equal(spreadWindowMs(hourlyCron, { cronJitterMs: 0 }), 0, 'jitter can be turned off');
  assert.equal(spreadWindowMs(hourlyCron, { spreadFraction: 0 }), 0, 'spreadFraction 0 turns every offset off');
  const offsets = new Set<number>();
  for (let i = 0; i < 1000; i++) {
    const off = computeOffsetMs(`m-${i}`, hourlyCron);
    assert.ok(off >= 0 && off < 5_000, `offset ${off}`);
    offsets.add(off);
  }
  assert.ok(offsets.size > 800, `1,000 monitors on 0 * * * * start at distinct milliseconds (${offsets.size})`);
});
