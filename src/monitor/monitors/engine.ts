/**
 * Connects the monitor definitions to the scheduler and the runner: every monitor is in the scheduler (state off =
 * disabled), definition and settings changes apply live, and types with their own concurrency cap (browser) get a
 * gate class of their own.
 */
import type { Logger } from 'pino';
import type { SettingsService } from '../../core/settings/settings.service.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import { createScheduler, type Scheduler, type MonitorScheduleInfo, type RunObserver } from '../scheduler/scheduler.js';
import { parseSchedule } from '../scheduler/schedule.js';
import type { Clock } from '../scheduler/clock.js';
import type { MonitorsService } from './monitors.service.js';
import type { StoredMonitor } from './monitors.repo.js';
import type { RunResult, RunService } from './run.service.js';

export interface Engine {
  scheduler: Scheduler<RunResult>;
  runNow(name: string): Promise<RunResult>;
  scheduleInfo(name: string): MonitorScheduleInfo | undefined;
  nextDueMs(name: string): number | null | undefined;
  start(): void;
  stop(): Promise<void>;
}

export function createEngine(deps: {
  monitors: MonitorsService;
  runner: RunService;
  types: ReadonlyMap<DbName, MonitorType>;
  settings: SettingsService;
  log: Logger;
  clock?: Clock;
  /** Sees every run start and end (benchmarks, tests). */
  observer?: RunObserver;
}): Engine {
  const { monitors, runner, settings, log } = deps;
  const classCaps: Record<string, number> = {};
  for (const [id, t] of deps.types) if (t.maxConcurrent) classCaps[id] = t.maxConcurrent;
  const scheduler = createScheduler<RunResult>({
    run: (id) => runner.run(monitors.get(id)),
    concurrencyLimit: Number(settings.get('concurrencyLimit')),
    classCaps,
    log,
    clock: deps.clock,
    observer: deps.observer,
  });
  const sync = (name: string, m: StoredMonitor | undefined) => {
    if (!m) {
      scheduler.remove(name);
      return;
    }
    const spec = parseSchedule(m.config.sched!, m.config.schedCron || undefined);
    scheduler.upsert(name, spec, {
      enabled: m.config.state === 'on',
      weightClass: classCaps[m.type] ? m.type : undefined,
    });
  };
  for (const m of monitors.repo.all()) {
    try {
      sync(m.name, m);
    } catch (e) {
      log.error({ err: e, monitor: m.name }, 'monitor has an unusable schedule; not scheduled');
    }
  }
  monitors.onChange(sync);
  settings.onChange((changed) => {
    if (changed.includes('concurrencyLimit')) scheduler.setConcurrency(Number(settings.get('concurrencyLimit')));
  });
  return {
    scheduler,
    runNow: (name) => {
      monitors.get(name);
      return scheduler.runNow(name);
    },
    scheduleInfo: (name) => scheduler.info(name),
    nextDueMs: (name) => scheduler.nextDueMs(name),
    start: () => scheduler.start(),
    stop: () => scheduler.stop(),
  };
}
