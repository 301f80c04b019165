/**
 * The scheduler's public types: what a run receives (RunContext), the options it is built with, what it reports per
 * monitor (MonitorScheduleInfo) and overall (SchedulerStats), and the Scheduler interface itself. scheduler.ts
 * re-exports them; callers import from there.
 */
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { LatenessSummary } from './lateness-histogram.js';
import type { ScheduleSpec, SpreadOptions } from './schedule.js';

export type RunTrigger = 'schedule' | 'manual';

export interface RunContext {
  dueMs: number;
  startMs: number;
  /** startMs − dueMs (for manual runs: the time waited in the queue). */
  latenessMs: number;
  trigger: RunTrigger;
}

export type RunFn<R> = (id: string, dueMs: number, ctx: RunContext) => Promise<R>;

export interface RunObserver {
  onStart?(id: string, ctx: RunContext): void;
  onEnd?(id: string, ctx: RunContext, ok: boolean, endMs: number): void;
}

export interface SchedulerOptions<R> extends SpreadOptions {
  run: RunFn<R>;
  clock?: Clock;
  /** Max simultaneous runs; default 200. Live: setConcurrency(). */
  concurrencyLimit?: number;
  /** Per-weightClass caps, e.g. { browser: 2 }. Live: setClassCaps(). */
  classCaps?: Record<string, number>;
  log?: Logger;
  observer?: RunObserver;
  /**
   * Minimum gap between two dispatcher ticks, so near-simultaneous dues are popped together; default 100 ms. Measured
   * (bench:scheduler, bare GET, 10,000 monitors at 1MIN): 5 ms → 2,622 checks per CPU-second, 100 ms → 4,730 (each
   * wake-up of the process costs more than a check's own work at that rate), start lateness p99 5 → 99 ms.
   * Live: setBatchMs().
   */
  batchMs?: number;
  /** Max entries popped per tick before yielding to the event loop; default 5,000. */
  maxBatch?: number;
}

export interface UpsertOptions {
  enabled: boolean;
  /** Gate class for per-class caps; default "default". */
  weightClass?: string;
  /**
   * Keep the entry only while it is enabled or a run of it is queued or running; otherwise drop it (at once when
   * idle, else when that run ends) and create none. A cluster member's monitors of shards held elsewhere (decision
   * 184): they need no entry, and a run now of one makes an entry for that run only.
   */
  transient?: boolean;
}

export interface MonitorScheduleInfo {
  enabled: boolean;
  cron: string;
  /** True for an explicit cron (schedCron): it runs at its time + a jitter of a few seconds, not spread. */
  custom: boolean;
  /** IANA zone the cron fields are read in (presets: UTC). */
  timezone: string;
  /** Next scheduled due time (fire + offset), null when disabled or the cron never fires again. */
  nextDueMs: number | null;
  offsetMs: number;
  spreadWindowMs: number;
  running: boolean;
  queued: boolean;
  lastDueMs: number | null;
  lastStartMs: number | null;
  lastLatenessMs: number | null;
}

export interface SchedulerStats {
  monitors: number;
  enabled: number;
  queued: number;
  running: number;
  concurrencyLimit: number;
  /** Scheduled occurrences that fell due. */
  dueCount: number;
  /** Scheduled occurrences started (each records a lateness). */
  startedCount: number;
  completedCount: number;
  failedCount: number;
  /** Due occurrences skipped because the previous run of the same monitor was still queued or running. */
  skippedOverlap: number;
  /** Occurrences passed over because the process was stalled/suspended for more than an interval. */
  missedCount: number;
  manualCount: number;
  lateness: LatenessSummary;
}

export interface Scheduler<R = void> {
  upsert(id: string, spec: ScheduleSpec, opts: UpsertOptions): void;
  remove(id: string): void;
  has(id: string): boolean;
  setConcurrency(n: number): void;
  /** Changes the minimum gap between dispatcher ticks (the next tick keeps the gap it was armed with). */
  setBatchMs(ms: number): void;
  setClassCaps(caps: Record<string, number>): void;
  /**
   * A shard taken over (cluster): if the monitor's first occurrence due after `fromMs` is already past and was not
   * started here, queue it now as a scheduled run (one run, however long the gap).
   */
  catchUp(id: string, fromMs: number): void;
  /** Runs now, ahead of queued scheduled work; joins the in-flight run if the monitor is running. */
  runNow(id: string): Promise<R>;
  info(id: string): MonitorScheduleInfo | undefined;
  /** What info() would say of a disabled, never-run entry for `id` with `spec` (a monitor with no entry here). */
  describe(id: string, spec: ScheduleSpec): MonitorScheduleInfo;
  /** info(id)?.nextDueMs without building the rest (list responses). */
  nextDueMs(id: string): number | null | undefined;
  start(): void;
  /** Stops dispatching, drops queued work, and resolves when in-flight runs have finished. */
  stop(): Promise<void>;
  stats(): SchedulerStats;
  /** Zeroes the counters and the lateness histogram. */
  resetStats(): void;
}
