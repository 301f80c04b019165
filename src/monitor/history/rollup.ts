/**
 * Per monitor-hour rollups: counts by status, response-time count/sum/min/max and a log-bucket histogram (what p95
 * and the auto-threshold median/MAD need), and count/sum/min/max of each numeric metric. A rollup is a pure function
 * of its hour's raw rows (`rollupOf`), so a rollup always equals a direct computation over the rows it covers.
 *
 * Response statistics (respCount, sum, min, max, histogram) cover only "measured" results: status OK, MINOR, MAJOR or
 * CRITICAL (the target answered). DOWN/ERROR/EXCEPTION/DOWNTIME response times are timeouts or nothing and are left
 * out so they don't distort averages and percentiles. `count` and `statusCounts` cover every result.
 *
 * Histogram: bucket 0 = [0, 1) ms; bucket k ≥ 1 = [2^((k-1)/8), 2^(k/8)) ms (each ≈ 9 % wide), up to k = 255.
 */
import { ByteReader, ByteWriter, type RawRow } from './result-codec.js';
import { STATUSES } from './types.js';
import { UP_MAX_CODE } from './types.js';

export const HIST_BUCKETS = 256;
const VERSION = 1;

export interface MetricAgg {
  count: number;
  sum: number;
  min: number;
  max: number;
}

export interface Rollup {
  count: number;
  /** Indexed by status code (STATUSES order). */
  statusCounts: number[];
  respCount: number;
  respSum: number;
  respMin: number;
  respMax: number;
  /** Dense histogram, HIST_BUCKETS long; empty in decoded rollups (they carry `sparse`) and when not wanted. */
  hist: Uint32Array;
  /** Decoded rollups: the non-zero histogram buckets (indexes and counts). */
  sparse?: { idx: number[]; cnt: number[] };
  metrics: Record<string, MetricAgg>;
}

export function histBucket(v: number): number {
  if (!(v >= 1)) return 0;
  return Math.min(HIST_BUCKETS - 1, 1 + Math.floor(Math.log2(v) * 8));
}

export function bucketBounds(k: number): [number, number] {
  if (k === 0) return [0, 1];
  return [2 ** ((k - 1) / 8), 2 ** (k / 8)];
}

const NO_HIST = new Uint32Array(0);

export function emptyRollup(withHist = true): Rollup {
  return {
    count: 0,
    statusCounts: new Array<number>(STATUSES.length).fill(0),
    respCount: 0,
    respSum: 0,
    respMin: Infinity,
    respMax: -Infinity,
    hist: withHist ? new Uint32Array(HIST_BUCKETS) : NO_HIST,
    metrics: {},
  };
}

/** Adds one raw row to an accumulating rollup. */
export function addRow(acc: Rollup, row: RawRow): void {
  acc.count++;
  acc.statusCounts[row.code] = (acc.statusCounts[row.code] ?? 0) + 1;
  if (row.code <= UP_MAX_CODE) {
    acc.respCount++;
    acc.respSum += row.resp;
    if (row.resp < acc.respMin) acc.respMin = row.resp;
    if (row.resp > acc.respMax) acc.respMax = row.resp;
    if (acc.hist.length) acc.hist[histBucket(row.resp)]!++;
  }
  if (row.metrics) {
    for (const [k, v] of Object.entries(row.metrics)) {
      const m = (acc.metrics[k] ??= { count: 0, sum: 0, min: Infinity, max: -Infinity });
      m.count++;
      m.sum += v;
      if (v < m.min) m.min = v;
      if (v > m.max) m.max = v;
    }
  }
}

/** The rollup of the rows with fromMs ≤ ts < toMs (all rows when no bounds). */
export function rollupOf(rows: readonly RawRow[], fromMs = -Infinity, toMs = Infinity): Rollup {
  const acc = emptyRollup();
  for (const r of rows) if (r.ts >= fromMs && r.ts < toMs) addRow(acc, r);
  return acc;
}

/** Merges `src` into `acc`. */
export function mergeRollup(acc: Rollup, src: Rollup): void {
  acc.count += src.count;
  for (let i = 0; i < acc.statusCounts.length; i++) acc.statusCounts[i]! += src.statusCounts[i] ?? 0;
  acc.respCount += src.respCount;
  acc.respSum += src.respSum;
  if (src.respMin < acc.respMin) acc.respMin = src.respMin;
  if (src.respMax > acc.respMax) acc.respMax = src.respMax;
  if (acc.hist.length) {
    if (src.sparse) src.sparse.idx.forEach((k, i) => (acc.hist[k]! += src.sparse!.cnt[i]!));
    else for (let i = 0; i < src.hist.length; i++) if (src.hist[i]) acc.hist[i]! += src.hist[i]!;
  }
  for (const [k, m] of Object.entries(src.metrics)) {
    const a = (acc.metrics[k] ??= { count: 0, sum: 0, min: Infinity, max: -Infinity });
    a.count += m.count;
    a.sum += m.sum;
    if (m.min < a.min) a.min = m.min;
    if (m.max > a.max) a.max = m.max;
  }
}

/**
 * Estimated q-quantile (0 < q ≤ 1) of the measured response times: the nearest-rank value (rank ⌈q·n⌉) located in
 * its histogram bucket and interpolated linearly inside it, clamped to [min, max]. Error ≤ one bucket (≈ 9 %).
 */
export function quantile(r: Pick<Rollup, 'hist' | 'respCount' | 'respMin' | 'respMax'>, q: number): number | null {
  if (r.respCount === 0) return null;
  const rank = Math.max(1, Math.ceil(q * r.respCount));
  let cum = 0;
  for (let k = 0; k < HIST_BUCKETS; k++) {
    const c = r.hist[k]!;
    if (c === 0) continue;
    if (cum + c >= rank) {
      const [lo, hi] = bucketBounds(k);
      const v = lo + ((hi - lo) * (rank - cum)) / c;
      return Math.min(r.respMax, Math.max(r.respMin, v));
    }
    cum += c;
  }
  return r.respMax;
}

/** A rollup with a dense histogram (decoded rollups carry a sparse one): comparable with rollupOf(). */
export function densify(r: Rollup): Rollup {
  const out = emptyRollup();
  mergeRollup(out, r);
  return out;
}

export function encodeRollup(rollup: Rollup): Buffer {
  const r = rollup.sparse ? densify(rollup) : rollup;
  const w = new ByteWriter(64);
  w.u8(VERSION);
  w.varint(r.count);
  for (const c of r.statusCounts) w.varint(c);
  w.varint(r.respCount);
  if (r.respCount > 0) {
    w.f64(r.respSum);
    w.f32(r.respMin);
    w.f32(r.respMax);
    let used = 0;
    for (let k = 0; k < HIST_BUCKETS; k++) if (r.hist[k]) used++;
    w.u8(Math.min(used, 255));
    for (let k = 0, n = 0; k < HIST_BUCKETS && n < 255; k++) {
      if (!r.hist[k]) continue;
      w.u8(k);
      w.varint(r.hist[k]!);
      n++;
    }
  }
  const names = Object.keys(r.metrics).slice(0, 255);
  w.u8(names.length);
  for (const n of names) {
    const m = r.metrics[n]!;
    w.str(n);
    w.varint(m.count);
    w.f64(m.sum);
    w.f64(m.min);
    w.f64(m.max);
  }
  return w.bytes();
}

/** Decodes a rollup; `withHist = false` skips the histogram (for callers that need no percentiles). */
export function decodeRollup(bytes: Uint8Array, withHist = true): Rollup {
  const rd = new ByteReader(bytes);
  const version = rd.u8();
  if (version !== VERSION) throw new Error(`unknown rollup version ${version}`);
  const r = emptyRollup(false);
  const idx: number[] = [];
  const cnt: number[] = [];
  r.count = rd.varint();
  for (let i = 0; i < r.statusCounts.length; i++) r.statusCounts[i] = rd.varint();
  r.respCount = rd.varint();
  if (r.respCount > 0) {
    r.respSum = rd.f64();
    r.respMin = rd.f32();
    r.respMax = rd.f32();
    const used = rd.u8();
    for (let i = 0; i < used; i++) {
      idx.push(rd.u8());
      cnt.push(rd.varint());
    }
  }
  if (withHist) r.sparse = { idx, cnt };
  const nMetrics = rd.u8();
  for (let i = 0; i < nMetrics; i++) {
    const name = rd.str();
    r.metrics[name] = { count: rd.varint(), sum: rd.f64(), min: rd.f64(), max: rd.f64() };
  }
  return r;
}

/**
 * A day block: the rollups of one monitor-day, stored as one value (one ordered key per day keeps 30- and 56-day reads
 * at 30–56 entries). Layout: u8 version | repeated (u8 hourOfDay, varint length, rollup bytes), hours ascending.
 */
export function encodeDayBlock(hours: Map<number, Uint8Array>): Buffer {
  const w = new ByteWriter(64 * hours.size + 1);
  w.u8(VERSION);
  for (const h of [...hours.keys()].sort((a, b) => a - b)) {
    const bytes = hours.get(h)!;
    w.u8(h);
    w.varint(bytes.length);
    w.raw(bytes);
  }
  return w.bytes();
}

export function decodeDayBlock(bytes: Uint8Array): Map<number, Uint8Array> {
  const rd = new ByteReader(bytes);
  const version = rd.u8();
  if (version !== VERSION) throw new Error(`unknown day block version ${version}`);
  const out = new Map<number, Uint8Array>();
  while (!rd.done) {
    const h = rd.u8();
    out.set(h, rd.raw(rd.varint()));
  }
  return out;
}
