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

  /** A run's result (or, in a cluster, one another instance recorded: history-follow.ts), run at `origin`. */
  record(
    r: Pick<RunResult, 'name' | 'ts' | 'status' | 'responseTimeMs' | 'message' | 'metrics' | 'details'>,
    origin?: ResultOrigin,
  ): void {
    // Fields assigned one by one (no spread): every instance runs this for every monitor's every result.
    const last: LastResult = { ts: r.ts, status: r.status, responseTimeMs: r.responseTimeMs };
    if (origin) {
      last.probe = origin.probe;
      last.location = origin.location;
      last.instance = origin.instance;
    }
    if (r.message && r.status !== 'OK') last.message = r.message.slice(0, 500);
    const days = r.metrics?.certDaysLeft;
    if (typeof days === 'number') last.certDaysLeft = days;
    const parent = (r.details?.suppressedBy as { name?: unknown } | undefined)?.name;
    if (typeof parent === 'string') last.suppressedBy = parent;
    this.map.set(r.name, last);
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
