/**
 * The scheduler's jobs: an occurrence handed to the concurrency gate (enqueue), its start (lateness recorded for a
 * scheduled run, the run function called, the monitor marked in flight), its end (counters, observer, the caller of
 * runNow answered) and its cancellation while still queued; a transient entry is dropped when it falls idle.
 */
import { AppError } from '../../core/errors.js';
import type { Deferred, Job, Entry, SchedulerState } from './scheduler-state.js';
import type { RunContext, RunTrigger } from './scheduler-types.js';

export function enqueue<R>(
  s: SchedulerState<R>,
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
    start: () => startJob(s, job),
  };
  e.queuedJob = job;
  s.gate.enqueue(job, urgent);
}

function startJob<R>(s: SchedulerState<R>, job: Job<R>): Promise<unknown> {
  const e = job.entry;
  if (e.queuedJob === job) e.queuedJob = null;
  const startMs = s.clock.now();
  const ctx: RunContext = { dueMs: job.dueMs, startMs, latenessMs: startMs - job.dueMs, trigger: job.trigger };
  if (job.trigger === 'schedule') {
    s.c.startedCount++;
    s.hist.record(Math.max(0, ctx.latenessMs));
    e.lastDueMs = job.dueMs;
    e.lastLatenessMs = ctx.latenessMs;
  } else {
    s.c.manualCount++;
  }
  e.lastStartMs = startMs;
  s.opts.observer?.onStart?.(e.id, ctx);
  let p: Promise<R>;
  try {
    p = s.opts.run(e.id, job.dueMs, ctx);
  } catch (err) {
    p = Promise.reject(err);
  }
  s.inflight.set(e.id, p);
  return p.then(
    (value) => finish(s, job, ctx, p, true, value, undefined),
    (err: unknown) => finish(s, job, ctx, p, false, undefined, err),
  );
}

function finish<R>(
  s: SchedulerState<R>,
  job: Job<R>,
  ctx: RunContext,
  p: Promise<R>,
  ok: boolean,
  value: R | undefined,
  err: unknown,
): void {
  const id = job.entry.id;
  if (s.inflight.get(id) === p) s.inflight.delete(id);
  if (ok) s.c.completedCount++;
  else {
    s.c.failedCount++;
    if (job.deferred === null) {
      s.log?.warn({ monitor: id, err: err instanceof Error ? err.message : String(err) }, 'scheduler: run failed');
    }
  }
  s.opts.observer?.onEnd?.(id, ctx, ok, s.clock.now());
  dropIfIdle(s, job.entry);
  if (job.deferred !== null) {
    if (ok) job.deferred.resolve(value as R);
    else job.deferred.reject(err);
  }
}

export function cancelQueued<R>(s: SchedulerState<R>, e: Entry<R>, reason: AppError | null): void {
  const job = e.queuedJob;
  if (job === null) return;
  e.queuedJob = null;
  s.gate.cancel(job);
  if (job.deferred !== null) job.deferred.reject(reason ?? new AppError('UNAVAILABLE', 'run cancelled'));
}

/** Drops a transient entry that is disabled and has no run queued or running (UpsertOptions.transient). */
export function dropIfIdle<R>(s: SchedulerState<R>, e: Entry<R>): void {
  // On every run's end: the cheap flags first, so a held monitor's entry costs no map lookup here.
  if (!e.transient || e.enabled || e.queuedJob !== null) return;
  if (!s.inflight.has(e.id) && s.entries.get(e.id) === e) dropEntry(s, e);
}

/** Takes an entry out of the map, the heap and the counts (its queued run, if any, is the caller's). */
export function dropEntry<R>(s: SchedulerState<R>, e: Entry<R>): void {
  s.entries.delete(e.id);
  s.heap.remove(e);
  if (e.enabled) s.enabledCount--;
  s.specs.release(e.spec);
}
