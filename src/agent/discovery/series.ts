/**
 * Metric time series in the METRICS bucket: key [metricKey, timeMs] → number, one point per cycle. Points older than
 * RETENTION_MS (30 days) are pruned at most once an hour. Graph reads downsample a range into at most `maxPoints`
 * time buckets with the average, min and max of each (like the monitor's histGraph).
 */
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';

export const RETENTION_MS = 30 * 86_400_000;
export const SYSTEM_GRAPH_KEYS = [
  'system_cpu',
  'system_mem',
  'system_swap',
  'system_load1',
  'system_load5',
  'system_load15',
];

export interface GraphPoint {
  timeMs: number;
  avg: number;
  min: number;
  max: number;
  samples: number;
}

export function seriesOps(points: Record<string, number>, nowMs: number): BatchOp[] {
  return Object.entries(points).map(([k, v]) => ({ type: 'put', bucket: 'METRICS', key: [k, nowMs], value: v }));
}

export async function readSeries(
  store: KvStore,
  key: string,
  startMs: number,
  endMs: number,
): Promise<Array<[number, number]>> {
  const out: Array<[number, number]> = [];
  for await (const e of store.bucket('METRICS').range<number>({ start: [key, startMs], end: [key, endMs + 1] })) {
    out.push([(e.key as [string, number])[1], e.value]);
  }
  return out;
}

export function downsample(
  points: Array<[number, number]>,
  startMs: number,
  endMs: number,
  maxPoints = 300,
): GraphPoint[] {
  if (points.length <= maxPoints) return points.map(([t, v]) => ({ timeMs: t, avg: v, min: v, max: v, samples: 1 }));
  const width = Math.max(1, Math.ceil((endMs - startMs + 1) / maxPoints));
  const buckets = new Map<number, GraphPoint & { sum: number }>();
  for (const [t, v] of points) {
    // Clamped: a point outside [startMs, endMs] lands in the first/last bucket, never in an extra one.
    const b = startMs + Math.min(maxPoints - 1, Math.max(0, Math.floor((t - startMs) / width))) * width;
    const cur = buckets.get(b);
    if (!cur) buckets.set(b, { timeMs: b, avg: v, min: v, max: v, samples: 1, sum: v });
    else {
      cur.sum += v;
      cur.samples++;
      cur.min = Math.min(cur.min, v);
      cur.max = Math.max(cur.max, v);
    }
  }
  return [...buckets.values()].map(({ sum, ...p }) => ({ ...p, avg: Math.round((sum / p.samples) * 100) / 100 }));
}

export async function graph(
  store: KvStore,
  keys: string[],
  startMs: number,
  endMs: number,
  maxPoints?: number,
): Promise<Record<string, GraphPoint[]>> {
  const out: Record<string, GraphPoint[]> = {};
  for (const k of keys) out[k] = downsample(await readSeries(store, k, startMs, endMs), startMs, endMs, maxPoints);
  return out;
}

/** Deletes points older than the retention for every key that has points. */
export async function pruneSeries(store: KvStore, nowMs: number): Promise<number> {
  const b = store.bucket('METRICS');
  const keys = new Set<string>();
  let last: string | undefined;
  // Walk one entry per key: jump past each key's range.
  for (;;) {
    let next: string | undefined;
    for await (const e of b.range({ start: last === undefined ? undefined : [last, Infinity], limit: 1 }))
      next = (e.key as [string, number])[0];
    if (next === undefined || next === last) break;
    keys.add(next);
    last = next;
  }
  let removed = 0;
  for (const k of keys) removed += await b.deleteRange({ start: [k, -Infinity], end: [k, nowMs - RETENTION_MS] });
  return removed;
}
