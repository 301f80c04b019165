/**
 * How alerting's values look outside: the Alert a channel receives for a monitor's decision, an open problem as the
 * API shows it, and a channel probe's result as a test result.
 */
import type { Alert, ProbeResult } from '../../core/notify/channel.js';
import type { AlertState } from './alert-policy.js';
import type { AlertMonitor, ProblemView, TestResult } from './alerting-types.js';
import { parseList } from './maintenance.js';

export function toAlert(
  m: AlertMonitor,
  kind: Alert['kind'],
  status: string,
  previousStatus: string | undefined,
  nowMs: number,
  result?: { message?: string; responseTimeMs?: number; diagnosis?: string },
): Alert {
  const tags = parseList(m.tags);
  return {
    kind,
    monitor: {
      name: m.name,
      type: m.type ?? 'unknown',
      ...(m.display_name ? { displayName: m.display_name } : {}),
      ...(m.probe ? { probe: m.probe } : {}),
      ...(m.location ? { location: m.location } : {}),
      ...(tags.length ? { tags } : {}),
    },
    status,
    ...(previousStatus ? { previousStatus } : {}),
    ...(result?.message ? { message: result.message } : {}),
    ...(result?.diagnosis
      ? {
          diagnosis: result.diagnosis,
          message: result.message ? `${result.diagnosis}\n${result.message}` : result.diagnosis,
        }
      : {}),
    ...(result?.responseTimeMs !== undefined ? { responseTimeMs: result.responseTimeMs } : {}),
    timestampMs: nowMs,
  };
}

export function fromProbe(p: ProbeResult): TestResult {
  return p.ok
    ? { ok: true, latencyMs: p.latencyMs, ...(p.message ? { message: p.message } : {}) }
    : { ok: false, latencyMs: p.latencyMs, error: p.message ?? 'failed' };
}

export function problemView(name: string, s: AlertState): ProblemView {
  return {
    monitor: name,
    status: s.alertedStatus ?? s.lastStatus ?? 'OK',
    ...(s.lastStatus ? { lastStatus: s.lastStatus } : {}),
    ...(s.openedMs !== undefined ? { openedMs: s.openedMs } : {}),
    ...(s.lastAlertMs !== undefined ? { lastAlertMs: s.lastAlertMs } : {}),
    ...(s.ack ? { acknowledged: { ...s.ack } } : {}),
  };
}
