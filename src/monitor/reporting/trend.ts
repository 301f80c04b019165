/**
 * Trend of one monitor: for the last 24 h, 7 d and 4 w (28 d) ending now, and for the previous period of the same
 * length: availability, average and p95 response time, counts by status, and the change (current − previous).
 *
 * Definitions:
 * - availabilityPct = results with status OK/MINOR/MAJOR/CRITICAL ÷ results that are not DOWNTIME × 100
 *   (DOWN, ERROR and EXCEPTION count as unavailable; DOWNTIME is excluded); null when there are none.
 * - avg/p95 response cover measured results (OK..CRITICAL) only; p95 is the nearest-rank 95th percentile estimated
 *   from the rollups' log histogram (error ≤ one bucket, ≈ 9 %), clamped to the period's min/max.
 * - Whole hours come from hourly rollups; the hours cut by a period boundary are computed from their raw rows while
 *   raw data is kept (afterwards the whole hour is counted in the period where it starts). Raw rows of interior
 *   hours are never read.
 */
import type { HistoryReads } from '../history/history.reads.js';
import type { RawRow } from '../history/result-codec.js';
import { emptyRollup, mergeRollup, quantile, rollupOf, type Rollup } from '../history/rollup.js';
import { round } from './timeline.js';
import { STATUSES, UP_MAX_CODE, DOWNTIME_CODE, hourStart, type DbName, type StatusCounts } from '../history/types.js';
import { HOUR_MS } from '../../core/time.js';

export const TREND_PERIODS = { '24h': 24 * HOUR_MS, '7d': 7 * 24 * HOUR_MS, '4w': 28 * 24 * HOUR_MS } as const;
export type TrendKey = keyof typeof TREND_PERIODS;

export interface PeriodStats {
  from: number;
  to: number;
  total: number;
  availabilityPct: number | null;
  avgResponseMs: number | null;
  p95ResponseMs: number | null;
  counts: StatusCounts;
}

export interface TrendEntry extends PeriodStats {
  previous: PeriodStats;
  change: { availabilityPct: number | null; avgResponseMs: number | null; p95ResponseMs: number | null };
}

export type Trend = { dbname: DbName; name: string; now: number } & Record<TrendKey, TrendEntry>;

export function periodStats(r: Rollup, from: number, to: number): PeriodStats {
  const counts = Object.fromEntries(STATUSES.map((s, i) => [s, r.statusCounts[i] ?? 0])) as StatusCounts;
  let up = 0;
  for (let i = 0; i <= UP_MAX_CODE; i++) up += r.statusCounts[i] ?? 0;
  const counted = r.count - (r.statusCounts[DOWNTIME_CODE] ?? 0);
  const p95 = quantile(r, 0.95);
  return {
    from,
    to,
    total: r.count,
    availabilityPct: counted > 0 ? round((up / counted) * 100, 4) : null,
    avgResponseMs: r.respCount > 0 ? round(r.respSum / r.respCount, 3) : null,
    p95ResponseMs: p95 === null ? null : round(p95, 3),
    counts,
  };
}

const diff = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : round(a - b, 4));

export async function trend(h: HistoryReads, dbname: DbName, name: string): Promise<Trend> {
  const now = h.now();
  const oldest = now - 2 * TREND_PERIODS['4w'];
  const rollups = await h.hourRollups(dbname, name, hourStart(oldest), now + 1);
  const cut = new Set<number>([hourStart(now)]);
  for (const len of Object.values(TREND_PERIODS)) {
    for (const b of [now - len, now - 2 * len]) if (b !== hourStart(b)) cut.add(hourStart(b));
  }
  const edgeRows = new Map<number, RawRow[]>();
  await Promise.all(
    [...cut].map(async (hour) => {
      const [hr] = await h.hourRows(dbname, name, hour, hour + 1);
      if (hr) edgeRows.set(hour, hr.rows);
    }),
  );
  const stats = (from: number, to: number): PeriodStats => {
    const acc = emptyRollup();
    for (const { hour, rollup } of rollups) {
      const end = hour + HOUR_MS;
      if (end <= from || hour >= to) continue;
      if (hour >= from && end <= to) mergeRollup(acc, rollup);
      else {
        const rows = edgeRows.get(hour);
        if (rows) mergeRollup(acc, rollupOf(rows, from, to));
        else if (hour >= from) mergeRollup(acc, rollup);
      }
    }
    return periodStats(acc, from, to);
  };
  const out = { dbname, name, now } as Trend;
  for (const [key, len] of Object.entries(TREND_PERIODS) as Array<[TrendKey, number]>) {
    const cur = stats(now - len, now + 1);
    const prev = stats(now - 2 * len, now - len);
    cur.to = now;
    out[key] = {
      ...cur,
      previous: prev,
      change: {
        availabilityPct: diff(cur.availabilityPct, prev.availabilityPct),
        avgResponseMs: diff(cur.avgResponseMs, prev.avgResponseMs),
        p95ResponseMs: diff(cur.p95ResponseMs, prev.p95ResponseMs),
      },
    };
  }
  return out;
}
