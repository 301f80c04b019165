/**
 * The per-monitor alert state machine: a pure function of (previous state, new status, policy, now).
 *
 * - Non-OK = MINOR, MAJOR, CRITICAL, DOWN, ERROR, EXCEPTION. A monitor with notifyStatus 'on' sends a problem alert
 *   once it has been non-OK for `notifyAfter` consecutive runs (default 1), whatever mix of non-OK statuses.
 * - While a problem is open (a problem alert was sent), a change of status among the non-OK ones (MINOR → CRITICAL,
 *   ERROR → DOWN, and also CRITICAL → MINOR) alerts again ('change').
 * - Nothing repeats while the status holds, unless `renotifyMinutes` > 0 and that long has passed since the last
 *   alert ('renotify').
 * - Returning to OK sends one recovery, only when a problem was sent (even if notifications were turned off since,
 *   so an incident opened in PagerDuty gets resolved). An OK after failures that never reached notifyAfter is silent.
 * - DOWNTIME (a maintenance window): never alerts, and the run does not count: the failure streak and any open
 *   problem are frozen. At the window's end the next run is judged against the state from before the window: still
 *   failing → the streak continues (an open problem alerts again only if the status changed or renotify is due);
 *   OK → the streak resets and an open problem gets its recovery.
 * - Acknowledged (a user acknowledged the open problem): no re-notify and no alert for a change that is not worse
 *   than the status acknowledged (rank: MINOR < MAJOR < CRITICAL < DOWN = ERROR = EXCEPTION). A worse status alerts
 *   ('change') and ends the acknowledgement; a recovery ends it too.
 */
import type { Status } from '../monitor-types/types.js';
import { worse } from '../monitors/classify.js';

export const NON_OK_STATUSES: ReadonlySet<string> = new Set([
  'MINOR',
  'MAJOR',
  'CRITICAL',
  'DOWN',
  'ERROR',
  'EXCEPTION',
]);

export interface AlertState {
  /** Last status judged (never DOWNTIME). */
  lastStatus?: string;
  /** Consecutive non-OK runs, DOWNTIME runs not counted. */
  failCount: number;
  /** Status of the last problem alert; set while a problem is open (sent and not yet recovered). */
  alertedStatus?: string;
  /** When the last problem alert was decided (Unix ms). */
  lastAlertMs?: number;
  /** When the open problem was first alerted (Unix ms); absent in records written before acknowledgements. */
  openedMs?: number;
  /** Set while a user has acknowledged the open problem. */
  ack?: AckState;
}

export interface AckState {
  by: string;
  atMs: number;
  note?: string;
  /** The status when acknowledged: only a worse one alerts again. */
  status: string;
}

export interface AlertPolicy {
  notify: boolean;
  notifyAfter: number;
  /** 0 = never re-notify. */
  renotifyMs: number;
}

export type AlertReason = 'threshold' | 'change' | 'renotify' | 'recovery';

export interface AlertDecision {
  state: AlertState;
  alert?: { kind: 'problem' | 'recovery'; status: string; previousStatus?: string; reason: AlertReason };
}

function toInt(v: string | undefined, dflt: number, min: number): number {
  const n = v === undefined || v.trim() === '' ? NaN : Number(v);
  return Number.isFinite(n) ? Math.max(min, Math.floor(n)) : dflt;
}

/**
 * Reads the monitor's string fields: notifyStatus ('on' = notify), notifyAfter (default 1), renotifyMinutes (0).
 * emailOnF implies notify: a monitor stored without notifyStatus (written before create/update filled it in) and with
 * emailOnF 'true' notifies; an explicit notifyStatus 'off' mutes it.
 */
export function policyFor(m: {
  notifyStatus?: string;
  notifyAfter?: string;
  renotifyMinutes?: string;
  emailOnF?: string;
}): AlertPolicy {
  const status = (m.notifyStatus ?? '').trim().toLowerCase();
  return {
    notify: status === 'on' || (status === '' && m.emailOnF?.trim() === 'true'),
    notifyAfter: toInt(m.notifyAfter, 1, 1),
    renotifyMs: toInt(m.renotifyMinutes, 0, 0) * 60_000,
  };
}

export const INITIAL_STATE: AlertState = Object.freeze({ failCount: 0 });

export function evaluate(
  prev: AlertState | undefined,
  status: string,
  policy: AlertPolicy,
  nowMs: number,
): AlertDecision {
  const s = prev ?? INITIAL_STATE;
  if (status === 'DOWNTIME') return { state: s };
  if (!NON_OK_STATUSES.has(status)) {
    // OK (or any status we do not know as a failure).
    const state: AlertState = { lastStatus: status, failCount: 0 };
    if (s.alertedStatus === undefined) return { state };
    return {
      state,
      alert: { kind: 'recovery', status, previousStatus: s.lastStatus ?? s.alertedStatus, reason: 'recovery' },
    };
  }
  // Capped at notifyAfter: a steady failure leaves the state unchanged (no store write per run).
  const failCount = Math.min(s.failCount + 1, policy.notifyAfter);
  const base: AlertState = { ...s, lastStatus: status, failCount };
  const previousStatus = s.lastStatus !== undefined && s.lastStatus !== status ? s.lastStatus : undefined;
  if (s.alertedStatus !== undefined && s.ack) {
    // Acknowledged: the open problem follows the status silently until it gets worse than what was acknowledged.
    if (policy.notify && isWorse(status, s.ack.status)) {
      const { ack: _ended, ...rest } = base;
      return {
        state: { ...rest, alertedStatus: status, lastAlertMs: nowMs },
        alert: { kind: 'problem', status, previousStatus: s.alertedStatus, reason: 'change' },
      };
    }
    return { state: status === s.alertedStatus ? base : { ...base, alertedStatus: status } };
  }
  if (s.alertedStatus !== undefined) {
    if (status !== s.alertedStatus) {
      // The open problem follows the new status even when notifications are off (no alert then).
      const state = { ...base, alertedStatus: status, lastAlertMs: policy.notify ? nowMs : s.lastAlertMs };
      return policy.notify
        ? { state, alert: { kind: 'problem', status, previousStatus: s.alertedStatus, reason: 'change' } }
        : { state };
    }
    const due = policy.renotifyMs > 0 && nowMs - (s.lastAlertMs ?? 0) >= policy.renotifyMs;
    if (policy.notify && due)
      return { state: { ...base, lastAlertMs: nowMs }, alert: { kind: 'problem', status, reason: 'renotify' } };
    return { state: base };
  }
  if (policy.notify && failCount >= policy.notifyAfter) {
    return {
      state: { ...base, alertedStatus: status, lastAlertMs: nowMs, openedMs: nowMs },
      alert: { kind: 'problem', status, previousStatus, reason: 'threshold' },
    };
  }
  return { state: base };
}

/** True when two states are the same (to skip a store write on an unchanged steady state). */
export function sameState(a: AlertState | undefined, b: AlertState): boolean {
  return (
    a !== undefined &&
    a.lastStatus === b.lastStatus &&
    a.failCount === b.failCount &&
    a.alertedStatus === b.alertedStatus &&
    a.lastAlertMs === b.lastAlertMs &&
    a.openedMs === b.openedMs &&
    a.ack === b.ack
  );
}

/** True when `status` ranks above `than` (MINOR < MAJOR < CRITICAL < DOWN = ERROR = EXCEPTION). */
export function isWorse(status: string, than: string): boolean {
  return status !== than && worse(than as Status, status as Status) === status;
}

/** The state with the open problem acknowledged; undefined when no problem is open. */
export function acknowledge(
  s: AlertState | undefined,
  ack: { by: string; note?: string },
  nowMs: number,
): AlertState | undefined {
  if (s?.alertedStatus === undefined) return undefined;
  const note = ack.note?.trim();
  return { ...s, ack: { by: ack.by, atMs: nowMs, status: s.alertedStatus, ...(note ? { note } : {}) } };
}

/** The state without its acknowledgement (re-notify resumes); undefined when it was not acknowledged. */
export function unacknowledge(s: AlertState | undefined): AlertState | undefined {
  if (!s?.ack) return undefined;
  const { ack: _removed, ...rest } = s;
  return rest;
}
