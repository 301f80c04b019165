/**
 * The one status function (docs/statuses.md has it as a table):
 *  - DOWN      the target was unreachable (refused, timeout, DNS failure)              ← outcome 'down'
 *  - ERROR     the check ran and failed (HTTP >= 400, pattern absent, value mismatch)  ← outcome 'error'
 *  - EXCEPTION a configuration or system fault at run time                           ← outcome 'exception'
 *  - CRITICAL / MAJOR / MINOR: the highest of threshCri / threshMaj / threshMin that the threshold value reaches
 *    (value >= threshold; response time in ms unless the type says otherwise), or a level the type judged itself
 *    (patternComp, certificate expiry, packet loss, an api's own response-time thresholds) — the worse of the two
 *  - OK        otherwise
 *  - DOWNTIME  replaces any of the above while a maintenance window covers the monitor (decided by the runner)
 */
import type { CheckResult, Severity, Status } from '../monitor-types/types.js';

export interface Thresholds {
  threshMin?: number;
  threshMaj?: number;
  threshCri?: number;
}

const RANK: Record<Status, number> = {
  OK: 0,
  MINOR: 1,
  MAJOR: 2,
  CRITICAL: 3,
  DOWN: 4,
  ERROR: 4,
  EXCEPTION: 4,
  DOWNTIME: 0,
};

export function thresholdLevel(value: number, t: Thresholds): Severity | undefined {
  if (t.threshCri !== undefined && value >= t.threshCri) return 'CRITICAL';
  if (t.threshMaj !== undefined && value >= t.threshMaj) return 'MAJOR';
  if (t.threshMin !== undefined && value >= t.threshMin) return 'MINOR';
  return undefined;
}

export function classify(result: CheckResult, t: Thresholds): Status {
  if (result.outcome === 'down') return 'DOWN';
  if (result.outcome === 'error') return 'ERROR';
  if (result.outcome === 'exception') return 'EXCEPTION';
  const value = result.thresholdValue === undefined ? result.responseTimeMs : result.thresholdValue;
  const level = value === null ? undefined : thresholdLevel(value, t);
  let status: Status = 'OK';
  for (const s of [level, result.severity]) if (s && RANK[s] > RANK[status]) status = s;
  return status;
}

export function worse(a: Status, b: Status): Status {
  return RANK[b] > RANK[a] ? b : a;
}

/** Numeric thresholds from a monitor's string fields ('' or absent = unset). */
export function fixedThresholds(c: Record<string, string | undefined>): Thresholds {
  const n = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
  return { threshMin: n(c.threshMin), threshMaj: n(c.threshMaj), threshCri: n(c.threshCri) };
}
