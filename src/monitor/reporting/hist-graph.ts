/**
 * Response time and numeric metrics of one monitor over [startMs, endMs), downsampled server-side to at most
 * `points` buckets (default 1,000, bounded to [10, 5,000]) with min/avg/max per bucket. Columnar output; buckets
 * without results are left out.
 *
 * Source: ranges up to 48 h read raw rows (bucket = ⌈range / points⌉ ms, at least 1 s); longer ranges read hourly
 * rollups only (bucket = a whole number of hours, so 30 days is 720 hourly points from 720 rollups). With rollups,
 * the hours at the range edges count whole. Response statistics cover measured results (OK..CRITICAL) only.
 */
import type { HistoryReads } from '../history/history.reads.js';
import type { RawRow } from '../history/result-codec.js';
import { addRow, emptyRollup, mergeRollup, type Rollup } from '../history/rollup.js';
import { hourStart, type DbName } from '../history/types.js';
import { HOUR_MS } from '../../core/time.js';

export const HIST_DEFAULT_POINTS = 1000;
export const HIST_MIN_POINTS = 10;
export const HIST_MAX_POINTS = 5000;
export const RAW_MAX_RANGE_MS = 48 * HOUR_MS;

export interface MinAvgMax {
  min: Array<number | null>;
  avg: Array<number | null>;
  max: Array<number | null>;
}

export interface HistGraph {
  dbname: DbName;
  name: string;
  startTime: number;
  endTime: number;
  source: 'raw' | 'rollup';
  bucketMs: number;
  /** Bucket start times. */
  t: number[];
  /** Results per bucket (all statuses). */
  count: number[];
  responseMs: MinAvgMax;
  metrics: Record<string, MinAvgMax>;
}

export function clampPoints(points: number | undefined): number {
  if (points === undefined || !Number.isFinite(points)) return HIST_DEFAULT_POINTS;
  return Math.min(HIST_MAX_POINTS, Math.max(HIST_MIN_POINTS, Math.floor(points)));
}

export async function histGraph(
  h: HistoryReads,
  dbname: DbName,
  name: string,
  startMs: number,
  endMs: number,
  points?: number,
): Promise<HistGraph> {
  const p = clampPoints(points);
  const buckets = new Map<number, Rollup>();
  let bucketMs: number;
  let source: HistGraph['source'];
  if (endMs - startMs <= RAW_MAX_RANGE_MS) {
    source = 'raw';
    bucketMs = Math.max(1000, Math.ceil((endMs - startMs) / p));
    const rows: RawRow[] = await h.rows(dbname, name, startMs, endMs);
    for (const r of rows) {
      const t = startMs + Math.floor((r.ts - startMs) / bucketMs) * bucketMs;
      let acc = buckets.get(t);
      if (!acc) buckets.set(t, (acc = emptyRollup(false)));
      addRow(acc, r);
    }
  } else {
    source = 'rollup';
    const base = hourStart(startMs);
    bucketMs = Math.ceil((endMs - base) / p / HOUR_MS) * HOUR_MS;
    for (const { hour, rollup } of await h.hourRollups(dbname, name, base, endMs, false)) {
      const t = base + Math.floor((hour - base) / bucketMs) * bucketMs;
      let acc = buckets.get(t);
      if (!acc) buckets.set(t, (acc = emptyRollup(false)));
      mergeRollup(acc, rollup);
    }
  }
  return shape(dbname, name, startMs, endMs, source, bucketMs, buckets);
}

function shape(
  dbname: DbName,
  name: string,
  startTime: number,
  endTime: number,
  source: HistGraph['source'],
  bucketMs: number,
  buckets: Map<number, Rollup>,
): HistGraph {
  const times = [...buckets.keys()].sort((a, b) => a - b);
  const out: HistGraph = {
    dbname,
    name,
    startTime,
    endTime,
    source,
    bucketMs,
    t: times,
    count: [],
    responseMs: { min: [], avg: [], max: [] },
    metrics: {},
  };
  const metricNames = new Set<string>();
  for (const r of buckets.values()) for (const k of Object.keys(r.metrics)) metricNames.add(k);
  for (const k of metricNames) out.metrics[k] = { min: [], avg: [], max: [] };
  for (const t of times) {
    const r = buckets.get(t)!;
    out.count.push(r.count);
    const has = r.respCount > 0;
    out.responseMs.min.push(has ? r.respMin : null);
    out.responseMs.avg.push(has ? r.respSum / r.respCount : null);
    out.responseMs.max.push(has ? r.respMax : null);
    for (const k of metricNames) {
      const m = r.metrics[k];
      const col = out.metrics[k]!;
      col.min.push(m ? m.min : null);
      col.avg.push(m ? m.sum / m.count : null);
      col.max.push(m ? m.max : null);
    }
  }
  return out;
}
