/**
 * The monitor scheduler: one min-heap of due times and ONE timer armed for the earliest; the dispatcher pops every
 * due entry, computes its next due, and hands the occurrence to the concurrency gate (gate.ts). A monitor's due time
 * is its cron fire time + a stable offset (schedule.ts, computeOffsetMs: a preset's spread, or an explicit cron's
 * jitter of a few seconds). See docs/scheduling.md.
 *
 * Rules: a disabled monitor never runs on schedule; the same monitor never overlaps itself (an occurrence that falls
 * due while the previous one is queued or running is skipped and counted); lateness = start − due, recorded for every
 * scheduled run; after start() (e.g. a restart) each monitor's first due is its next fire + offset still ahead.
 */
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { createSystemClock, type Clock, type TimerHandle } from './clock.js';
import { DueHeap, type HeapEntry } from './due-heap.js';
import { ConcurrencyGate, type GateJob } from './gate.js';
import { LatenessHistogram, type LatenessSummary } from './lateness-histogram.js';
import { computeOffsetMs, spreadWindowMs, type ScheduleSpec, type SpreadOptions } from './schedule.js';
import { createSpecRegistry } from './spec-registry.js';

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
  /** info(id)?.nextDueMs without building the rest (list responses). */
  nextDueMs(id: string): number | null | undefined;
  start(): void;
  /** Stops dispatching, drops queued work, and resolves when in-flight runs have finished. */
  stop(): Promise<void>;
  stats(): SchedulerStats;
  /** Zeroes the counters and the lateness histogram. */
  resetStats(): void;
}

interface Deferred<R> {
  resolve(v: R): void;
  reject(e: unknown): void;
  promise: Promise<R>;
}

interface Job<R> extends GateJob {
  entry: Entry<R>;
  dueMs: number;
  trigger: RunTrigger;
  deferred: Deferred<R> | null;
}

interface Entry<R> extends HeapEntry {
  id: string;
  spec: ScheduleSpec;
  enabled: boolean;
  cls: string;
  offsetMs: number;
  fireMs: number;
  queuedJob: Job<R> | null;
  lastDueMs: number | null;
  lastStartMs: number | null;
  lastLatenessMs: number | null;
}

const MAX_TIMER_MS = 60 * 60_000;

export function createScheduler<R = void>(opts: SchedulerOptions<R>): Scheduler<R> {
  const clock = opts.clock ?? createSystemClock();
  const log = opts.log;
  const spread: SpreadOptions = {
    spreadFraction: opts.spreadFraction,
    maxSpreadMs: opts.maxSpreadMs,
    cronJitterMs: opts.cronJitterMs,
  };
  let batchMs = Math.max(0, opts.batchMs ?? 100);
  const maxBatch = Math.max(1, opts.maxBatch ?? 5000);
  const gate = new ConcurrencyGate<Job<R>>({ limit: opts.concurrencyLimit ?? 200, classCaps: opts.classCaps });
  const entries = new Map<string, Entry<R>>();
  const inflight = new Map<string, Promise<R>>();
  const heap = new DueHeap<Entry<R>>();
  const specs = createSpecRegistry();
  const hist = new LatenessHistogram();
  const c = {
    dueCount: 0,
    startedCount: 0,
    completedCount: 0,
    failedCount: 0,
    skippedOverlap: 0,
    missedCount: 0,
    manualCount: 0,
  };
  let enabledCount = 0;
  let started = false;
  let timer: TimerHandle = null; // null: not armed
  let armedAtMs = Number.POSITIVE_INFINITY;
  let lastTickMs = Number.NEGATIVE_INFINITY;
  let seq = 0;

  /** Puts an enabled entry at its first due time still ahead of `nowMs` (fire + offset ≥ now). */
  function placeFrom(e: Entry<R>, nowMs: number): void {
    const fire = e.spec.nextFireAfter(nowMs - e.offsetMs - 1);
    heap.remove(e);
    if (fire === null) return;
    e.fireMs = fire;
    e.dueMs = fire + e.offsetMs;
    e.seq = ++seq;
    heap.push(e);
  }

  function arm(): void {
    if (!started) return;
    const top = heap.peek();
    if (top === undefined) return;
    const atMs = Math.max(top.dueMs, lastTickMs + batchMs);
    if (timer !== null && armedAtMs <= atMs) return;
    if (timer !== null) clock.clearTimeout(timer);
    armedAtMs = atMs;
    timer = clock.setTimeout(tick, Math.min(MAX_TIMER_MS, Math.max(0, atMs - clock.now())));
  }

  function tick(): void {
    timer = null;
    armedAtMs = Number.POSITIVE_INFINITY;
    if (!started) return;
    const nowMs = clock.now();
    lastTickMs = nowMs;
    let popped = 0;
    for (let top = heap.peek(); top !== undefined && top.dueMs <= nowMs; top = heap.peek()) {
      if (popped++ >= maxBatch) {
        lastTickMs = Number.NEGATIVE_INFINITY; // more are due: come back at once
        break;
      }
      heap.pop();
      dispatch(top, nowMs);
    }
    arm();
  }

  function dispatch(e: Entry<R>, nowMs: number): void {
    const dueMs = e.dueMs;
    c.dueCount++;
    reschedule(e, nowMs);
    if (e.queuedJob !== null || inflight.has(e.id)) {
      c.skippedOverlap++;
      log?.debug({ monitor: e.id, dueMs }, 'scheduler: previous run still active, occurrence skipped');
      return;
    }
    enqueue(e, dueMs, 'schedule', null, false);
  }

  function reschedule(e: Entry<R>, nowMs: number): void {
    let fire = e.spec.nextFireAfter(e.fireMs);
    if (fire !== null && fire + e.offsetMs <= nowMs) {
      // Behind by more than an interval (stall, suspend, clock jump): pass over the missed occurrences.
      const ahead = e.spec.nextFireAfter(nowMs - e.offsetMs);
      for (let f: number | null = fire, n = 0; f !== null && ahead !== null && f < ahead && n < 10_000; n++) {
        c.missedCount++;
        f = e.spec.nextFireAfter(f);
      }
      fire = ahead;
    }
    if (fire === null) return;
    e.fireMs = fire;
    e.dueMs = fire + e.offsetMs;
    e.seq = ++seq;
    heap.push(e);
  }

  function enqueue(
    e: Entry<R>,
    dueMs: number,
    trigger: RunTrigger,
    deferred: Deferred<R> | null,
    urgent: boolean,
  ): void {
    const job: Job<R> = {
      cls: e.cls,
      seq: 0,
      cancelled: false,
      entry: e,
      dueMs,
      trigger,
      deferred,
      start: () => startJob(job),
    };
    e.queuedJob = job;
    gate.enqueue(job, urgent);
  }

  function startJob(job: Job<R>): Promise<unknown> {
    const e = job.entry;
    if (e.queuedJob === job) e.queuedJob = null;
    const startMs = clock.now();
    const ctx: RunContext = { dueMs: job.dueMs, startMs, latenessMs: startMs - job.dueMs, trigger: job.trigger };
    if (job.trigger === 'schedule') {
      c.startedCount++;
      hist.record(Math.max(0, ctx.latenessMs));
      e.lastDueMs = job.dueMs;
      e.lastLatenessMs = ctx.latenessMs;
    } else {
      c.manualCount++;
    }
    e.lastStartMs = startMs;
    opts.observer?.onStart?.(e.id, ctx);
    let p: Promise<R>;
    try {
      p = opts.run(e.id, job.dueMs, ctx);
    } catch (err) {
      p = Promise.reject(err);
    }
    inflight.set(e.id, p);
    return p.then(
      (value) => finish(job, ctx, p, true, value, undefined),
      (err: unknown) => finish(job, ctx, p, false, undefined, err),
    );
  }

  function finish(job: Job<R>, ctx: RunContext, p: Promise<R>, ok: boolean, value: R | undefined, err: unknown): void {
    const id = job.entry.id;
    if (inflight.get(id) === p) inflight.delete(id);
    if (ok) c.completedCount++;
    else {
      c.failedCount++;
      if (job.deferred === null) {
        log?.warn({ monitor: id, err: err instanceof Error ? err.message : String(err) }, 'scheduler: run failed');
      }
    }
    opts.observer?.onEnd?.(id, ctx, ok, clock.now());
    if (job.deferred !== null) {
      if (ok) job.deferred.resolve(value as R);
      else job.deferred.reject(err);
    }
  }

  function cancelQueued(e: Entry<R>, reason: AppError | null): void {
    const job = e.queuedJob;
    if (job === null) return;
    e.queuedJob = null;
    gate.cancel(job);
    if (job.deferred !== null) job.deferred.reject(reason ?? new AppError('UNAVAILABLE', 'run cancelled'));
  }

  function nextDueOf(e: Entry<R>): number | null {
    if (e.enabled && heap.has(e)) return e.dueMs;
    if (e.enabled && !started) {
      const fire = e.spec.nextFireAfter(clock.now() - e.offsetMs - 1);
      return fire === null ? null : fire + e.offsetMs;
    }
    return null;
  }

  const scheduler: Scheduler<R> = {
    upsert(id, specIn, o) {
      const spec = specs.intern(specIn);
      const cls = o.weightClass ?? 'default';
      let e = entries.get(id);
      if (e === undefined) {
        e = {
          id,
          spec,
          enabled: false,
          cls,
          offsetMs: 0,
          fireMs: 0,
          dueMs: 0,
          seq: 0,
          heapIndex: -1,
          queuedJob: null,
          lastDueMs: null,
          lastStartMs: null,
          lastLatenessMs: null,
        };
        entries.set(id, e);
      } else if (e.spec !== spec) {
        specs.release(e.spec);
      } else {
        specs.release(spec); // intern() counted a reference the entry already holds
      }
      const changed = e.spec !== spec || e.enabled !== o.enabled || !heap.has(e);
      if (e.enabled !== o.enabled) enabledCount += o.enabled ? 1 : -1;
      e.spec = spec;
      e.cls = cls;
      e.enabled = o.enabled;
      e.offsetMs = computeOffsetMs(id, spec, spread);
      if (!o.enabled) {
        heap.remove(e);
        if (e.queuedJob?.trigger === 'schedule' && e.queuedJob.deferred === null) cancelQueued(e, null);
      } else if (changed && started) {
        placeFrom(e, clock.now());
      }
      arm();
    },
    remove(id) {
      const e = entries.get(id);
      if (e === undefined) return;
      entries.delete(id);
      heap.remove(e);
      if (e.enabled) enabledCount--;
      specs.release(e.spec);
      cancelQueued(e, AppError.notFound('monitor removed from the schedule'));
    },
    has: (id) => entries.has(id),
    catchUp(id, fromMs) {
      const e = entries.get(id);
      if (e === undefined || !e.enabled || !started || e.queuedJob !== null || inflight.has(id)) return;
      const fire = e.spec.nextFireAfter(fromMs - e.offsetMs);
      if (fire === null) return;
      const dueMs = fire + e.offsetMs;
      if (dueMs > clock.now() || (e.lastDueMs !== null && e.lastDueMs >= dueMs)) return;
      c.dueCount++;
      enqueue(e, dueMs, 'schedule', null, false);
    },
    setConcurrency: (n) => gate.setLimit(n),
    setBatchMs: (ms) => void (batchMs = Math.max(0, ms)),
    setClassCaps: (caps) => gate.setClassCaps(caps),
    runNow(id) {
      const e = entries.get(id);
      if (e === undefined) return Promise.reject(AppError.notFound('monitor is not scheduled'));
      const running = inflight.get(id);
      if (running !== undefined) return running;
      const queued = e.queuedJob;
      if (queued?.deferred) return queued.deferred.promise;
      const deferred = createDeferred<R>();
      if (queued !== null) {
        // A scheduled occurrence is waiting: promote it (same due time) instead of running twice.
        e.queuedJob = null;
        gate.cancel(queued);
        enqueue(e, queued.dueMs, 'schedule', deferred, true);
      } else {
        enqueue(e, clock.now(), 'manual', deferred, true);
      }
      return deferred.promise;
    },
    nextDueMs(id) {
      const e = entries.get(id);
      return e === undefined ? undefined : nextDueOf(e);
    },
    info(id) {
      const e = entries.get(id);
      if (e === undefined) return undefined;
      return {
        enabled: e.enabled,
        cron: e.spec.cron,
        custom: e.spec.custom,
        timezone: e.spec.timezone,
        nextDueMs: nextDueOf(e),
        offsetMs: e.offsetMs,
        spreadWindowMs: spreadWindowMs(e.spec, spread),
        running: inflight.has(id),
        queued: e.queuedJob !== null,
        lastDueMs: e.lastDueMs,
        lastStartMs: e.lastStartMs,
        lastLatenessMs: e.lastLatenessMs,
      };
    },
    start() {
      if (started) return;
      started = true;
      lastTickMs = Number.NEGATIVE_INFINITY;
      const nowMs = clock.now();
      for (const e of entries.values()) if (e.enabled) placeFrom(e, nowMs);
      arm();
    },
    async stop() {
      started = false;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
      armedAtMs = Number.POSITIVE_INFINITY;
      for (const e of entries.values()) {
        heap.remove(e);
        cancelQueued(e, new AppError('UNAVAILABLE', 'scheduler stopped'));
      }
      await Promise.allSettled([...inflight.values()]);
    },
    stats: () => ({
      monitors: entries.size,
      enabled: enabledCount,
      queued: gate.queued,
      running: gate.running,
      concurrencyLimit: gate.concurrencyLimit,
      ...c,
      lateness: hist.summary(),
    }),
    resetStats() {
      for (const k of Object.keys(c) as (keyof typeof c)[]) c[k] = 0;
      hist.reset();
    },
  };
  return scheduler;
}

function createDeferred<R>(): Deferred<R> {
  let resolve!: (v: R) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<R>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { resolve, reject, promise };
}
