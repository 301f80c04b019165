/**
 * The scheduler's dispatch loop: ONE timer armed for the earliest due time in the heap (never sooner than batchMs
 * after the last tick); each tick pops every due entry (at most maxBatch, then comes back at once), puts it at its
 * next due time and hands the occurrence to the gate, skipping it when the previous run is still queued or running.
 */
import type { Entry, SchedulerState } from './scheduler-state.js';
import { enqueue } from './scheduler-jobs.js';

const MAX_TIMER_MS = 60 * 60_000;

/** Puts an enabled entry at its first due time still ahead of `nowMs` (fire + offset ≥ now). */
export function placeFrom<R>(s: SchedulerState<R>, e: Entry<R>, nowMs: number): void {
  const fire = e.spec.nextFireAfter(nowMs - e.offsetMs - 1);
  s.heap.remove(e);
  if (fire === null) return;
  e.fireMs = fire;
  e.dueMs = fire + e.offsetMs;
  e.seq = ++s.seq;
  s.heap.push(e);
}

export function arm<R>(s: SchedulerState<R>): void {
  if (!s.started) return;
  const top = s.heap.peek();
  if (top === undefined) return;
  const atMs = Math.max(top.dueMs, s.lastTickMs + s.batchMs);
  if (s.timer !== null && s.armedAtMs <= atMs) return;
  if (s.timer !== null) s.clock.clearTimeout(s.timer);
  s.armedAtMs = atMs;
  s.timer = s.clock.setTimeout(() => tick(s), Math.min(MAX_TIMER_MS, Math.max(0, atMs - s.clock.now())));
}

/** Disarms the timer (stop). */
export function disarm<R>(s: SchedulerState<R>): void {
  if (s.timer !== null) s.clock.clearTimeout(s.timer);
  s.timer = null;
  s.armedAtMs = Number.POSITIVE_INFINITY;
}

function tick<R>(s: SchedulerState<R>): void {
  s.timer = null;
  s.armedAtMs = Number.POSITIVE_INFINITY;
  if (!s.started) return;
  const nowMs = s.clock.now();
  s.lastTickMs = nowMs;
  let popped = 0;
  for (let top = s.heap.peek(); top !== undefined && top.dueMs <= nowMs; top = s.heap.peek()) {
    if (popped++ >= s.maxBatch) {
      s.lastTickMs = Number.NEGATIVE_INFINITY; // more are due: come back at once
      break;
    }
    s.heap.pop();
    dispatch(s, top, nowMs);
  }
  arm(s);
}

function dispatch<R>(s: SchedulerState<R>, e: Entry<R>, nowMs: number): void {
  const dueMs = e.dueMs;
  s.c.dueCount++;
  reschedule(s, e, nowMs);
  if (e.queuedJob !== null || s.inflight.has(e.id)) {
    s.c.skippedOverlap++;
    s.log?.debug({ monitor: e.id, dueMs }, 'scheduler: previous run still active, occurrence skipped');
    return;
  }
  enqueue(s, e, dueMs, 'schedule', null, false);
}

function reschedule<R>(s: SchedulerState<R>, e: Entry<R>, nowMs: number): void {
  let fire = e.spec.nextFireAfter(e.fireMs);
  if (fire !== null && fire + e.offsetMs <= nowMs) {
    // Behind by more than an interval (stall, suspend, clock jump): pass over the missed occurrences.
    const ahead = e.spec.nextFireAfter(nowMs - e.offsetMs);
    for (let f: number | null = fire, n = 0; f !== null && ahead !== null && f < ahead && n < 10_000; n++) {
      s.c.missedCount++;
      f = e.spec.nextFireAfter(f);
    }
    fire = ahead;
  }
  if (fire === null) return;
  e.fireMs = fire;
  e.dueMs = fire + e.offsetMs;
  e.seq = ++s.seq;
  s.heap.push(e);
}

/** The entry's next due time: in the heap once started, computed before start(); null when disabled or never again. */
export function nextDueOf<R>(s: SchedulerState<R>, e: Entry<R>): number | null {
  if (e.enabled && s.heap.has(e)) return e.dueMs;
  if (e.enabled && !s.started) {
    const fire = e.spec.nextFireAfter(s.clock.now() - e.offsetMs - 1);
    return fire === null ? null : fire + e.offsetMs;
  }
  return null;
}
