/**
 * Automatic thresholds (settings autoThreshold = 'true'): each monitor's threshMin/threshMaj/threshCri computed from
 * its own response times over the last autoThresholdRange hours (24, 168 or 720; anything else → 168).
 *
 * Method (robust to outliers): over the measured results (OK..CRITICAL) of the hourly rollups' log histograms,
 *   m = median, d = MAD (median absolute deviation from m), both estimated from the histogram (≈ 9 % resolution);
 *   threshMin = max(m + 3d, 1.5·m, m + 20 ms)
 *   threshMaj = max(m + 5d, 2·m,   m + 40 ms)
 *   threshCri = max(m + 8d, 3·m,   m + 80 ms)
 * rounded up to whole ms. The floors keep a perfectly flat history (d = 0) from alerting on noise, and make the three
 * strictly increasing. Fewer than `minSamples` (default 30) measured results → no thresholds (get() is undefined).
 * Series of types that declare `autoThresholds: false` are skipped (`skip`; sys: its threshold value is a utilisation
 * %, not the response time).
 *
 * In a cluster each member reads a monitor another member runs without loading its open hours (history.reads.ts
 * `whole`): those hours may miss rows there, never on the member that runs it and uses the thresholds.
 *
 * Recomputed every `intervalMs` (default 1 h) and on demand (`recompute()`, e.g. after a settings change). The
 * thresholds a user set explicitly on a monitor win over computed ones: the caller uses get() only for monitors
 * without fixed thresholds.
 */
import type { Logger } from 'pino';
import type { HistoryService } from '../history/history.service.js';
import { HIST_BUCKETS, bucketBounds, emptyRollup, mergeRollup, quantile, type Rollup } from '../history/rollup.js';
import { hourStart, type DbName } from '../history/types.js';
import { HOUR_MS } from '../../core/time.js';

export interface AutoThreshold {
  threshMin: number;
  threshMaj: number;
  threshCri: number;
  computedAtMs: number;
  samples: number;
  medianMs: number;
  madMs: number;
}

export interface AutoThresholds {
  get(dbname: DbName, name: string): AutoThreshold | undefined;
  /** Recomputes every monitor now (or clears all when autoThreshold is off); resolves the number computed. */
  recompute(): Promise<number>;
  start(): void;
  stop(): void;
}

export interface AutoThresholdOptions {
  history: HistoryService;
  log: Logger;
  /** Service settings as strings: autoThreshold, autoThresholdRange. */
  settings: { get(key: string): string | undefined };
  /** True for a type whose thresholds never compare the response time (its `autoThresholds: false`). */
  skip?: (dbname: DbName) => boolean;
  clock?: () => number;
  intervalMs?: number;
  minSamples?: number;
}

export const ALLOWED_RANGES_H = [24, 168, 720] as const;

/** Median absolute deviation from `median`, from a histogram (bucket midpoints clamped to [min, max]). */
export function histMad(r: Rollup, median: number): number {
  const devs: Array<[number, number]> = [];
  for (let k = 0; k < HIST_BUCKETS; k++) {
    const c = r.hist[k]!;
    if (!c) continue;
    const [lo, hi] = bucketBounds(k);
    const mid = Math.min(r.respMax, Math.max(r.respMin, k === 0 ? (lo + hi) / 2 : Math.sqrt(lo * hi)));
    devs.push([Math.abs(mid - median), c]);
  }
  devs.sort((a, b) => a[0] - b[0]);
  const half = r.respCount / 2;
  let cum = 0;
  for (const [d, c] of devs) {
    cum += c;
    if (cum >= half) return d;
  }
  return 0;
}

export function thresholdsFrom(r: Rollup, nowMs: number, minSamples = 30): AutoThreshold | undefined {
  if (r.respCount < minSamples) return undefined;
  const m = quantile(r, 0.5)!;
  const d = histMad(r, m);
  const up = (v: number): number => Math.ceil(v);
  return {
    threshMin: up(Math.max(m + 3 * d, 1.5 * m, m + 20)),
    threshMaj: up(Math.max(m + 5 * d, 2 * m, m + 40)),
    threshCri: up(Math.max(m + 8 * d, 3 * m, m + 80)),
    computedAtMs: nowMs,
    samples: r.respCount,
    medianMs: Math.round(m * 1000) / 1000,
    madMs: Math.round(d * 1000) / 1000,
  };
}

export function createAutoThresholds(opts: AutoThresholdOptions): AutoThresholds {
  const clock = opts.clock ?? Date.now;
  const computed = new Map<string, AutoThreshold>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  const key = (db: string, name: string): string => `${db}\u0000${name}`;

  async function run(): Promise<number> {
    if (opts.settings.get('autoThreshold') !== 'true') {
      computed.clear();
      return 0;
    }
    const asked = Number(opts.settings.get('autoThresholdRange'));
    const rangeH = (ALLOWED_RANGES_H as readonly number[]).includes(asked) ? asked : 168;
    const now = clock();
    const next = new Map<string, AutoThreshold>();
    for (const { dbname, name } of opts.history.series()) {
      if (opts.skip?.(dbname)) continue;
      const acc = emptyRollup();
      for (const { rollup } of await opts.history.hourRollups(
        dbname,
        name,
        hourStart(now - rangeH * HOUR_MS),
        now + 1,
        true,
        false,
      )) {
        mergeRollup(acc, rollup);
      }
      const t = thresholdsFrom(acc, now, opts.minSamples);
      if (t) next.set(key(dbname, name), t);
    }
    computed.clear();
    for (const [k, v] of next) computed.set(k, v);
    opts.log.debug({ monitors: next.size, rangeH }, 'auto thresholds recomputed');
    return next.size;
  }

  const api: AutoThresholds = {
    get: (dbname, name) => computed.get(key(dbname, name)),
    recompute() {
      running ??= run().finally(() => {
        running = undefined;
      });
      return running;
    },
    start() {
      if (timer) return;
      timer = setInterval(() => {
        api.recompute().catch((err: unknown) => opts.log.error({ err }, 'auto threshold recompute failed'));
      }, opts.intervalMs ?? HOUR_MS);
      timer.unref();
      api.recompute().catch((err: unknown) => opts.log.error({ err }, 'auto threshold recompute failed'));
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
  return api;
}
