/**
 * What push monitors have heard: each monitor's last start, success and failure pings and when this process began to
 * watch it, plus when the next ping is due. The push type's check (monitor-types/push.ts) reads it and returns facts;
 * the push service (push.service.ts) writes it when a ping arrives, stores what was heard (`PushRecord`, bucket
 * `push`) and applies what other instances of a cluster stored (`apply`). Nothing here runs a check.
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

export const PUSH_RECORD_VERSION = 1;

/** What was heard, as stored (bucket `push`, key = monitor name): the state without this process's own fields. */
export type PushRecord = Omit<PushState, 'watchedSinceMs' | 'seq'> & { v: typeof PUSH_RECORD_VERSION };

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

/**
 * The time the due time counts from: the latest ping, else when this process began watching. A ping heard before
 * that (stored by an earlier run of the service, or by another instance before this one started) counts from the
 * start of watching: a restarted or new instance gives every push monitor a full period + grace, as before a ping.
 */
export function baseOf(s: PushState): number {
  return Math.max(s.lastPingMs ?? -Infinity, s.watchedSinceMs);
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

  /** What was heard of `name`, to store. */
  stored(name: string): PushRecord | undefined {
    const s = this.states.get(name);
    if (!s) return undefined;
    const { watchedSinceMs: _w, seq: _s, ...heard } = s;
    return { v: PUSH_RECORD_VERSION, ...heard };
  }

  /** Takes what another instance (or an earlier run) stored; a new sequence number, so a run shows it saw it. */
  apply(name: string, rec: PushRecord, nowMs: number): void {
    if (rec.v !== PUSH_RECORD_VERSION) return;
    const s = this.watch(name, nowMs);
    const { v: _v, ...heard } = rec;
    this.states.set(name, { watchedSinceMs: s.watchedSinceMs, seq: s.seq + 1, ...heard });
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
