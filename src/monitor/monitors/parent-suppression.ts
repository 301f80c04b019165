/**
 * A failing result of a monitor with `parents` whose ancestor is failing keeps its real status, says which parent in
 * its message and `details.suppressedBy`, and carries the parent to alerting, which then suppresses the problem alert
 * (recoveries are never suppressed). Monitors without parents, and OK results, pass through untouched. The result is
 * amended in place, so history, the monitor list and a run-now answer all say the same.
 */
import { NON_OK_STATUSES } from '../alerting/alert-policy.js';
import type { DependencyGraph } from './dependencies.js';
import type { StoredMonitor } from './monitors.repo.js';
import type { RunResult } from './run.service.js';

/** Returns the failing parent's name when the result's alerts are to be suppressed. */
export function applyParentSuppression(
  graph: DependencyGraph,
  statusOf: (name: string) => string | undefined,
  m: StoredMonitor,
  r: RunResult,
): string | undefined {
  if (!m.config.parents || !NON_OK_STATUSES.has(r.status)) return undefined;
  const p = graph.failingAncestor(m, statusOf);
  if (!p) return undefined;
  r.message = `${r.message ?? r.status} (alerts suppressed: parent ${p.name} is ${p.status})`;
  r.details = { ...r.details, suppressedBy: p };
  return p.name;
}
