/**
 * The latest run of every monitor, compact (what the overview, GET /monitors and the per-monitor gauges of
 * /api/metrics need). Full results with details live in history.
 */
import type { Status } from '../monitor-types/types.js';
import type { RunResult } from './run.service.js';
import type { ResultOrigin } from '../history/origins.js';

export interface LastResult {
  ts: number;
  status: Status;
  responseTimeMs: number;
  message?: string;
  certDaysLeft?: number;
  /** The failing parent this result's alerts were suppressed for (dependencies): the dashboard groups it there. */
  suppressedBy?: string;
  /** Where it ran (history/origins.ts); absent when unknown (results older than origins, or not known yet). */
  probe?: string;
  location?: string;
  instance?: string;
}

export class LastResults {
  private readonly map = new Map<string, LastResult>();
  /** JSON of entries asked for since their last change (list responses re-serialise only what changed). */
  private readonly jsonCache = new Map<string, string>();

  /**
   * A run's result (or, in a cluster, one another instance recorded: history-follow.ts), run at `origin`. The entry is
   * updated in place when it has the same fields (decision 170: a new object per result would be promoted by the GC).
   */
  record(
    r: Pick<RunResult, 'name' | 'ts' | 'status' | 'responseTimeMs' | 'message' | 'metrics' | 'details'>,
    origin?: ResultOrigin,
  ): void {
    const message = r.message && r.status !== 'OK' ? r.message.slice(0, 500) : undefined;
    const days = r.metrics?.certDaysLeft;
    const certDaysLeft = typeof days === 'number' ? days : undefined;
    const parent = (r.details?.suppressedBy as { name?: unknown } | undefined)?.name;
    const suppressedBy = typeof parent === 'string' ? parent : undefined;
    const prev = this.map.get(r.name);
    const last: LastResult =
      prev && sameFields(prev, message, certDaysLeft, suppressedBy, origin)
        ? prev
        : { ts: r.ts, status: r.status, responseTimeMs: r.responseTimeMs };
    last.ts = r.ts;
    last.status = r.status;
    last.responseTimeMs = r.responseTimeMs;
    if (origin) {
      last.probe = origin.probe;
      last.location = origin.location;
      last.instance = origin.instance;
    }
    if (message !== undefined) last.message = message;
    if (certDaysLeft !== undefined) last.certDaysLeft = certDaysLeft;
    if (suppressedBy !== undefined) last.suppressedBy = suppressedBy;
    if (last !== prev) this.map.set(r.name, last);
    this.jsonCache.delete(r.name);
  }

  get(name: string): LastResult | undefined {
    return this.map.get(name);
  }

  /** JSON.stringify(get(name)), cached until the entry changes; undefined when there is none. */
  json(name: string): string | undefined {
    let j = this.jsonCache.get(name);
    if (j === undefined) {
      const last = this.map.get(name);
      if (last === undefined) return undefined;
      j = JSON.stringify(last);
      this.jsonCache.set(name, j);
    }
    return j;
  }

  set(name: string, last: LastResult): void {
    this.map.set(name, last);
    this.jsonCache.delete(name);
  }

  delete(name: string): void {
    this.map.delete(name);
    this.jsonCache.delete(name);
  }
}

/** Whether `prev` has exactly the optional fields a result with these values has (then it is updated in place). */
function sameFields(
  prev: LastResult,
  message: string | undefined,
  certDaysLeft: number | undefined,
  suppressedBy: string | undefined,
  origin: ResultOrigin | undefined,
): boolean {
  return (
    'message' in prev === (message !== undefined) &&
    'certDaysLeft' in prev === (certDaysLeft !== undefined) &&
    'suppressedBy' in prev === (suppressedBy !== undefined) &&
    'probe' in prev === (origin !== undefined) &&
    'location' in prev === (origin !== undefined) &&
    'instance' in prev === (origin !== undefined)
  );
}
