/**
 * What push monitors have heard (in memory, per process): each monitor's last start, success and failure pings and
 * when it began to be watched, plus when the next ping is due. The push type's check (monitor-types/push.ts) reads it
 * and returns facts; the push service (push.service.ts) writes it when a ping arrives. Nothing here runs a check.
 *
 * Due time (docs/checks-push.md): with `periodSeconds` the next ping is due `periodSeconds` after the last ping of any
 * kind; with a cron (`schedCron`) it is due at the cron's next fire after the last ping; with a preset (1MIN…60MIN)
 * one preset interval after it. The monitor is late once `graceSeconds` more have passed.
 */
import { parseSchedule } from '../scheduler/schedule.js';

export type PingKind = 'start' | 'success' | 'fail';

export interface PushState {
  /** When this process began watching the monitor (created, or the service started): the base before any ping. */
  watchedSinceMs: number;
  lastStartMs?: number;
  lastSuccessMs?: number;
  lastFailMs?: number;
  /** The kind and time of the latest ping. */
  lastKind?: PingKind;
  lastPingMs?: number;
  /** start → success of the latest successful run (ms), when a start preceded it. */
  durationMs?: number;
  exitCode?: number;
  /** The body of the latest success or fail ping (bounded, control characters removed). */
  message?: string;
  /** Increments on every ping: a run shows which pings it has seen. */
  seq: number;
}

/** A push monitor's config: sched, schedCron, periodSeconds and graceSeconds set its due time. */
export type PushTiming = Readonly<Record<string, string | undefined>>;

export const DEFAULT_GRACE_SECONDS = 60;

/** When the monitor is late: due time of the next ping after `baseMs` + the grace. */
export function lateAfterMs(c: PushTiming, baseMs: number, timezone = 'UTC'): number {
  const graceMs = Number(c.graceSeconds || DEFAULT_GRACE_SECONDS) * 1000;
  if (c.periodSeconds) return baseMs + Number(c.periodSeconds) * 1000 + graceMs;
  const cron = c.schedCron?.trim() || undefined;
  const spec = parseSchedule(c.sched || '5MIN', cron, cron ? { timezone } : {});
  const due = cron ? spec.nextFireAfter(baseMs) : baseMs + spec.minIntervalMs;
  // A cron that never fires again: never late.
  return due === null ? Number.MAX_SAFE_INTEGER : due + graceMs;
}

/** The time the due time counts from: the latest ping, else when watching began. */
export function baseOf(s: PushState): number {
  return s.lastPingMs ?? s.watchedSinceMs;
}

export class PushLedger {
  private readonly states = new Map<string, PushState>();

  get(name: string): Readonly<PushState> | undefined {
    return this.states.get(name);
  }

  /** Starts watching `name` (no-op when already watched). */
  watch(name: string, nowMs: number): PushState {
    let s = this.states.get(name);
    if (!s) {
      s = { watchedSinceMs: nowMs, seq: 0 };
      this.states.set(name, s);
    }
    return s;
  }

  forget(name: string): void {
    this.states.delete(name);
  }

  /** Records one ping. A success after a start of the same run sets the duration (start → success). */
  record(name: string, kind: PingKind, nowMs: number, facts: { exitCode?: number; message?: string } = {}): PushState {
    const s = this.watch(name, nowMs);
    s.seq++;
    s.lastKind = kind;
    s.lastPingMs = nowMs;
    if (kind === 'start') {
      s.lastStartMs = nowMs;
      return s;
    }
    const finishedBefore = Math.max(s.lastSuccessMs ?? -1, s.lastFailMs ?? -1);
    const started = s.lastStartMs !== undefined && s.lastStartMs > finishedBefore ? s.lastStartMs : undefined;
    if (kind === 'success') {
      s.lastSuccessMs = nowMs;
      s.durationMs = started === undefined ? undefined : nowMs - started;
    } else s.lastFailMs = nowMs;
    s.exitCode = facts.exitCode;
    s.message = facts.message;
    return s;
  }
}
