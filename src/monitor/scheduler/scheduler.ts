/**
 * The monitor scheduler: one min-heap of due times and ONE timer armed for the earliest; the dispatcher pops every
 * due entry, computes its next due, and hands the occurrence to the concurrency gate (gate.ts). A monitor's due time
 * is its cron fire time + a stable offset (schedule.ts, computeOffsetMs: a preset's spread, or an explicit cron's
 * jitter of a few seconds). See docs/scheduling.md.
 *
 * Rules: a disabled monitor never runs on schedule; the same monitor never overlaps itself (an occurrence that falls
 * due while the previous one is queued or running is skipped and counted); lateness = start − due, recorded for every
 * scheduled run; after start() (e.g. a restart) each monitor's first due is its next fire + offset still ahead.
 *
 * This file holds the public methods; the state is in scheduler-state.ts, the timer and heap in dispatch-loop.ts, the
 * queued and running jobs in scheduler-jobs.ts, the public types in scheduler-types.ts.
 */
import { AppError } from '../../core/errors.js';
import { computeOffsetMs, spreadWindowMs, type ScheduleSpec } from './schedule.js';
import { arm, disarm, nextDueOf, placeFrom } from './dispatch-loop.js';
import { cancelQueued, dropEntry, dropIfIdle, enqueue } from './scheduler-jobs.js';
import { createDeferred, createSchedulerState, newEntry, type SchedulerState } from './scheduler-state.js';
import type { MonitorScheduleInfo, Scheduler, SchedulerOptions, UpsertOptions } from './scheduler-types.js';

export type {
  MonitorScheduleInfo,
  RunContext,
  RunFn,
  RunObserver,
  RunTrigger,
  Scheduler,
  SchedulerOptions,
  SchedulerStats,
  UpsertOptions,
} from './scheduler-types.js';

export function createScheduler<R = void>(opts: SchedulerOptions<R>): Scheduler<R> {
  const s = createSchedulerState(opts);
  return {
    upsert: (id, spec, o) => upsert(s, id, spec, o),
    remove: (id) => remove(s, id),
    has: (id) => s.entries.has(id),
    catchUp: (id, fromMs) => catchUp(s, id, fromMs),
    setConcurrency: (n) => s.gate.setLimit(n),
    setBatchMs: (ms) => void (s.batchMs = Math.max(0, ms)),
    setClassCaps: (caps) => s.gate.setClassCaps(caps),
    runNow: (id) => runNow(s, id),
    nextDueMs(id) {
      const e = s.entries.get(id);
      return e === undefined ? undefined : nextDueOf(s, e);
    },
    info: (id) => info(s, id),
    describe: (id, spec) => describe(s, id, spec),
    start: () => start(s),
    stop: () => stop(s),
    stats: () => ({
      monitors: s.entries.size,
      enabled: s.enabledCount,
      queued: s.gate.queued,
      running: s.gate.running,
      concurrencyLimit: s.gate.concurrencyLimit,
      ...s.c,
      lateness: s.hist.summary(),
    }),
    resetStats() {
      for (const k of Object.keys(s.c) as (keyof typeof s.c)[]) s.c[k] = 0;
      s.hist.reset();
    },
  };
}

function upsert<R>(s: SchedulerState<R>, id: string, specIn: ScheduleSpec, o: UpsertOptions): void {
  let e = s.entries.get(id);
  if (e === undefined && o.transient && !o.enabled) return; // nothing to keep: no entry (UpsertOptions.transient)
  const spec = s.specs.intern(specIn);
  const cls = o.weightClass ?? 'default';
  if (e === undefined) {
    e = newEntry<R>(id, spec, cls);
    s.entries.set(id, e);
  } else if (e.spec !== spec) {
    s.specs.release(e.spec);
  } else {
    s.specs.release(spec); // intern() counted a reference the entry already holds
  }
  const changed = e.spec !== spec || e.enabled !== o.enabled || !s.heap.has(e);
  if (e.enabled !== o.enabled) s.enabledCount += o.enabled ? 1 : -1;
  e.spec = spec;
  e.cls = cls;
  e.enabled = o.enabled;
  e.offsetMs = computeOffsetMs(id, spec, s.spread);
  e.transient = o.transient === true;
  if (!o.enabled) {
    s.heap.remove(e);
    if (e.queuedJob?.trigger === 'schedule' && e.queuedJob.deferred === null) cancelQueued(s, e, null);
    dropIfIdle(s, e);
  } else if (changed && s.started) {
    placeFrom(s, e, s.clock.now());
  }
  arm(s);
}

function remove<R>(s: SchedulerState<R>, id: string): void {
  const e = s.entries.get(id);
  if (e === undefined) return;
  dropEntry(s, e);
  cancelQueued(s, e, AppError.notFound('monitor removed from the schedule'));
}

function catchUp<R>(s: SchedulerState<R>, id: string, fromMs: number): void {
  const e = s.entries.get(id);
  if (e === undefined || !e.enabled || !s.started || e.queuedJob !== null || s.inflight.has(id)) return;
  const fire = e.spec.nextFireAfter(fromMs - e.offsetMs);
  if (fire === null) return;
  const dueMs = fire + e.offsetMs;
  if (dueMs > s.clock.now() || (e.lastDueMs !== null && e.lastDueMs >= dueMs)) return;
  s.c.dueCount++;
  enqueue(s, e, dueMs, 'schedule', null, false);
}

function runNow<R>(s: SchedulerState<R>, id: string): Promise<R> {
  const e = s.entries.get(id);
  if (e === undefined) return Promise.reject(AppError.notFound('monitor is not scheduled'));
  const running = s.inflight.get(id);
  if (running !== undefined) return running;
  const queued = e.queuedJob;
  if (queued?.deferred) return queued.deferred.promise;
  const deferred = createDeferred<R>();
  if (queued !== null) {
    // A scheduled occurrence is waiting: promote it (same due time) instead of running twice.
    e.queuedJob = null;
    s.gate.cancel(queued);
    enqueue(s, e, queued.dueMs, 'schedule', deferred, true);
  } else {
    enqueue(s, e, s.clock.now(), 'manual', deferred, true);
  }
  return deferred.promise;
}

function info<R>(s: SchedulerState<R>, id: string): MonitorScheduleInfo | undefined {
  const e = s.entries.get(id);
  if (e === undefined) return undefined;
  return {
    enabled: e.enabled,
    cron: e.spec.cron,
    custom: e.spec.custom,
    timezone: e.spec.timezone,
    nextDueMs: nextDueOf(s, e),
    offsetMs: e.offsetMs,
    spreadWindowMs: spreadWindowMs(e.spec, s.spread),
    running: s.inflight.has(id),
    queued: e.queuedJob !== null,
    lastDueMs: e.lastDueMs,
    lastStartMs: e.lastStartMs,
    lastLatenessMs: e.lastLatenessMs,
  };
}

function describe<R>(s: SchedulerState<R>, id: string, spec: ScheduleSpec): MonitorScheduleInfo {
  return {
    enabled: false,
    cron: spec.cron,
    custom: spec.custom,
    timezone: spec.timezone,
    nextDueMs: null,
    offsetMs: computeOffsetMs(id, spec, s.spread),
    spreadWindowMs: spreadWindowMs(spec, s.spread),
    running: false,
    queued: false,
    lastDueMs: null,
    lastStartMs: null,
    lastLatenessMs: null,
  };
}

function start<R>(s: SchedulerState<R>): void {
  if (s.started) return;
  s.started = true;
  s.lastTickMs = Number.NEGATIVE_INFINITY;
  const nowMs = s.clock.now();
  for (const e of s.entries.values()) if (e.enabled) placeFrom(s, e, nowMs);
  arm(s);
}

async function stop<R>(s: SchedulerState<R>): Promise<void> {
  s.started = false;
  disarm(s);
  for (const e of s.entries.values()) {
    s.heap.remove(e);
    cancelQueued(s, e, new AppError('UNAVAILABLE', 'scheduler stopped'));
  }
  await Promise.allSettled([...s.inflight.values()]);
}
