/**
 * Thresholds: a value against {min, maj, cri} (value ≥ cri → CRITICAL, ≥ maj → MAJOR, ≥ min → MINOR, else OK; an
 * unset level is skipped). A group's fixed thresholds (settings) win; when all three are unset the metric's automatic
 * baseline (THRESHOLDS bucket, from POST /computeThreshold) is used; with neither the metric is always OK.
 *
 * Automatic baseline (robust to outliers): over the metric's last `windowMs` (default 7 days) of samples, at least
 * MIN_BASELINE_SAMPLES (30): median m and MAD; σ̂ = 1.4826·MAD, floored at max(1 % of |m|, 0.01) so a flat series
 * still gets a band; min = m + 3σ̂, maj = m + 4.5σ̂, cri = m + 6σ̂; percentage groups are capped at 100.
 */
import type { KvStore } from '../../core/storage/kv-store.js';
import type { MetricGroup, Settings } from '../settings.js';

export type Level = 'OK' | 'MINOR' | 'MAJOR' | 'CRITICAL';
export const LEVEL_RANK: Record<Level, number> = { OK: 0, MINOR: 1, MAJOR: 2, CRITICAL: 3 };

export interface Thresholds {
  min?: number;
  maj?: number;
  cri?: number;
  source: 'fixed' | 'auto' | 'none';
}

export interface Baseline {
  min: number;
  maj: number;
  cri: number;
  median: number;
  mad: number;
  samples: number;
  computedAtMs: number;
  method: 'median+k*MAD';
}

export const MIN_BASELINE_SAMPLES = 30;
const PCT_GROUPS = new Set<MetricGroup>(['CPU', 'MEM', 'SWAP', 'DISK']);

export function levelOf(value: number, t: Thresholds): Level {
  if (t.cri !== undefined && value >= t.cri) return 'CRITICAL';
  if (t.maj !== undefined && value >= t.maj) return 'MAJOR';
  if (t.min !== undefined && value >= t.min) return 'MINOR';
  return 'OK';
}

export function fixedThresholds(settings: Settings, group: MetricGroup): Thresholds | undefined {
  const n = (l: string): number | undefined => {
    const v = settings[`disco${group}GFixedThresh${l}`] ?? '';
    return v === '' ? undefined : Number(v);
  };
  const t: Thresholds = { min: n('Min'), maj: n('Maj'), cri: n('Cri'), source: 'fixed' };
  return t.min === undefined && t.maj === undefined && t.cri === undefined ? undefined : t;
}

export function thresholdsFor(settings: Settings, group: MetricGroup, baseline: Baseline | undefined): Thresholds {
  const fixed = fixedThresholds(settings, group);
  if (fixed) return fixed;
  if (baseline) return { min: baseline.min, maj: baseline.maj, cri: baseline.cri, source: 'auto' };
  return { source: 'none' };
}

function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function computeBaseline(values: number[], group: MetricGroup | undefined, nowMs: number): Baseline | undefined {
  if (values.length < MIN_BASELINE_SAMPLES) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const m = median(sorted);
  const mad = median(sorted.map((v) => Math.abs(v - m)).sort((a, b) => a - b));
  const sigma = Math.max(1.4826 * mad, Math.abs(m) * 0.01, 0.01);
  const cap = (v: number): number => Math.round((group && PCT_GROUPS.has(group) ? Math.min(100, v) : v) * 100) / 100;
  return {
    min: cap(m + 3 * sigma),
    maj: cap(m + 4.5 * sigma),
    cri: cap(m + 6 * sigma),
    median: m,
    mad,
    samples: values.length,
    computedAtMs: nowMs,
    method: 'median+k*MAD',
  };
}

/** The group a metric key belongs to (inverse of watch.ts naming). */
export function groupOfKey(key: string): MetricGroup | undefined {
  if (key === 'system_cpu') return 'CPU';
  if (key === 'system_mem') return 'MEM';
  if (key === 'system_swap') return 'SWAP';
  if (key.startsWith('system_load')) return 'LOAD';
  if (key.startsWith('disk_')) return 'DISK';
  if (/^port_\d+$/.test(key)) return 'PORT';
  if (/_(cpu|mem)$/.test(key)) return 'PROC';
  return undefined;
}

/** POST /computeThreshold: a baseline for every monitored metric key with enough history; stored in THRESHOLDS. */
export async function computeAllBaselines(
  store: KvStore,
  opts: { nowMs: number; windowMs?: number },
): Promise<{ computed: Record<string, Baseline>; skipped: Record<string, number> }> {
  const since = opts.nowMs - (opts.windowMs ?? 7 * 86_400_000);
  const values = new Map<string, number[]>();
  for await (const { key, value } of store.bucket('METRICS').range<number>()) {
    const [k, ts] = key as [string, number];
    if (ts < since || groupOfKey(k) === undefined) continue;
    let arr = values.get(k);
    if (!arr) values.set(k, (arr = []));
    arr.push(value);
  }
  const computed: Record<string, Baseline> = {};
  const skipped: Record<string, number> = {};
  const bucket = store.bucket('THRESHOLDS');
  for (const [k, vals] of values) {
    const b = computeBaseline(vals, groupOfKey(k), opts.nowMs);
    if (!b) {
      skipped[k] = vals.length;
      continue;
    }
    await bucket.put(k, b);
    computed[k] = b;
  }
  return { computed, skipped };
}
