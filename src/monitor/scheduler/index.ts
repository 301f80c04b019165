/** The scheduler's public surface (see docs/scheduling.md). */
export {
  parseSchedule,
  isSchedulePreset,
  computeOffsetMs,
  spreadWindowMs,
  hashId,
  SCHEDULE_PRESETS,
  DEFAULT_SPREAD_FRACTION,
  DEFAULT_MAX_SPREAD_MS,
} from './schedule.js';
export type { ScheduleSpec, ParseScheduleOptions, SpreadOptions } from './schedule.js';
export { createScheduler } from './scheduler.js';
export type {
  Scheduler,
  SchedulerOptions,
  SchedulerStats,
  MonitorScheduleInfo,
  UpsertOptions,
  RunContext,
  RunFn,
  RunObserver,
  RunTrigger,
} from './scheduler.js';
export { createSystemClock } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export { createFakeClock } from './fake-clock.js';
export type { FakeClock } from './fake-clock.js';
export type { LatenessSummary } from './lateness-histogram.js';
