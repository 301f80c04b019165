import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { tcpType } from '../monitor-types/tcp.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import { createFakeClock } from '../scheduler/clock.fake.js';
import { computeOffsetMs, DEFAULT_CRON_JITTER_MS, parseSchedule } from '../scheduler/schedule.js';
import { createMonitorSettings } from '../settings/monitor-settings.js';
import { createEngine } from './engine.js';
import { MonitorsRepo } from './monitors.repo.js';
import { MonitorsService } from './monitors.service.js';
import type { RunResult, RunService } from './run.service.js';

const log = pino({ level: 'silent' });
const HOUR = 3_600_000;

/** A real MonitorsService and settings on a temporary store, an engine on a fake clock, runs recorded. */
async function setup(startMs: number, timezone: string) {
  const dir = await mkdtemp(join(tmpdir(), 'engine-test-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  const box = createSecretBox(crypto.randomBytes(32));
  const settings = createMonitorSettings(store, box, 'info');
  await settings.load();
  await settings.update({ timezone });
  const repo = new MonitorsRepo(store);
  const monitors = new MonitorsService(repo, new Map<DbName, MonitorType>([['tcp', tcpType]]), box);
  const clock = createFakeClock(startMs);
  const runs: Array<{ name: string; atMs: number }> = [];
  const runner = {
    run: async (m: { name: string }) => {
      runs.push({ name: m.name, atMs: clock.now() });
      return {} as RunResult;
    },
  } as unknown as RunService;
  const engine = createEngine({ monitors, runner, types: new Map(), settings, log, clock });
  const tcp = (name: string, extra: Record<string, string>) =>
    monitors.create('tcp', { name, ip: '127.0.0.1', port: '9', ...extra });
  return {
    settings,
    engine,
    clock,
    runs,
    tcp,
    at: (name: string) => runs.filter((r) => r.name === name).map((r) => r.atMs),
    async close() {
      await clock.advanceUntil(engine.stop());
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const jitterOf = (name: string) => computeOffsetMs(name, parseSchedule('CRON', '0 * * * *'));

test('schedCron runs at its time (+ a jitter under 5 s) in the timezone setting, across the spring DST change', async () => {
  const h = await setup(Date.UTC(2025, 2, 29, 22, 0), 'Europe/Berlin');
  await h.tcp('daily', { schedCron: '30 2 * * *' });
  await h.tcp('hourly', { schedCron: '0 * * * *' });
  await h.tcp('preset', { sched: '60MIN' });
  h.engine.start();
  await h.clock.advanceTo(Date.UTC(2025, 2, 31, 1, 0));
  for (const name of ['daily', 'hourly']) {
    const j = jitterOf(name);
    assert.ok(j >= 0 && j < DEFAULT_CRON_JITTER_MS, `${name} jitter ${j}`);
  }
  // Berlin skips 02:00-03:00 on 2025-03-30: the nonexistent 02:30 runs at the first valid moment, 03:00 CEST.
  assert.deepEqual(
    h.at('daily'),
    [Date.UTC(2025, 2, 30, 1, 0), Date.UTC(2025, 2, 31, 0, 30)].map((t) => t + jitterOf('daily')),
  );
  // Every real hour, 23 local hours that day: 27 fires from 22:00Z to 00:59Z two days later.
  const hourly = h.at('hourly');
  assert.equal(hourly.length, 27);
  for (let i = 0; i < hourly.length; i++)
    assert.equal(hourly[i], Date.UTC(2025, 2, 29, 22) + i * HOUR + jitterOf('hourly'));
  // The preset keeps its spread: once an hour at a stable offset of up to 5 minutes.
  const presetOffset = computeOffsetMs('preset', parseSchedule('60MIN'));
  assert.ok(h.at('preset').every((t) => t % HOUR === presetOffset));
  const info = h.engine.scheduleInfo('daily')!;
  assert.equal(info.custom, true);
  assert.equal(info.timezone, 'Europe/Berlin');
  assert.equal(info.nextDueMs, Date.UTC(2025, 3, 1, 0, 30) + jitterOf('daily'));
  assert.equal(
    info.nextDueIso,
    `2025-04-01T02:30:0${Math.floor(jitterOf('daily') / 1000)}.${String(jitterOf('daily') % 1000).padStart(3, '0')}+02:00`,
  );
  await h.close();
});

test('autumn DST: a daily 02:30 runs once although 02:30 happens twice; hourly runs every real hour', async () => {
  const h = await setup(Date.UTC(2025, 9, 25, 22, 0), 'Europe/Berlin');
  await h.tcp('daily', { schedCron: '30 2 * * *' });
  await h.tcp('hourly', { schedCron: '0 * * * *' });
  h.engine.start();
  await h.clock.advanceTo(Date.UTC(2025, 9, 27, 0, 0));
  assert.deepEqual(
    h.at('daily'),
    [Date.UTC(2025, 9, 26, 0, 30), Date.UTC(2025, 9, 27, 1, 30)]
      .filter((t) => t < Date.UTC(2025, 9, 27))
      .map((t) => t + jitterOf('daily')),
  );
  assert.equal(h.at('hourly').length, 26, '25 local hours on the day, 26 fires in 26 real hours');
  await h.close();
});

test('the timezone setting applies live to every schedCron and to the next run shown', async () => {
  const h = await setup(Date.UTC(2025, 0, 1, 0, 0), 'UTC');
  await h.tcp('nine', { schedCron: '0 9 * * *' });
  h.engine.start();
  const j = jitterOf('nine');
  assert.equal(h.engine.scheduleInfo('nine')!.nextDueMs, Date.UTC(2025, 0, 1, 9) + j);
  assert.match(h.engine.scheduleInfo('nine')!.nextDueIso!, /^2025-01-01T09:00:0\d\.\d{3}\+00:00$/);
  await h.settings.update({ timezone: 'Asia/Kolkata' });
  const info = h.engine.scheduleInfo('nine')!;
  assert.equal(info.nextDueMs, Date.UTC(2025, 0, 1, 3, 30) + j, '09:00 in Kolkata is 03:30 UTC');
  assert.match(info.nextDueIso!, /^2025-01-01T09:00:0\d\.\d{3}\+05:30$/);
  assert.equal(info.displayTimezone, 'Asia/Kolkata');
  await h.clock.advanceTo(Date.UTC(2025, 0, 1, 4));
  assert.deepEqual(h.at('nine'), [Date.UTC(2025, 0, 1, 3, 30) + j]);
  await h.close();
});
