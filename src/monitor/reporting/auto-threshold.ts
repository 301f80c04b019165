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
 * In a cluster (`cluster` given) a member computes the monitors whose shard it holds only (it has every row of their
 * open hours) and shares them with the others through the store (auto-threshold-share.ts): every instance answers
 * with the holder's thresholds, and the store is read for each monitor once per recompute, not once per member.
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
import { shardKey } from '../cluster/shards.js';
import { thresholdKey, type ShardRef, type ShardThresholds, type ThresholdShare } from './auto-threshold-share.js';

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
  /**
   * Recomputes every monitor computed here (a cluster: those held here, then reads the others') now, or clears all when
   * autoThreshold is off; resolves the number computed here.
   */
  recompute(): Promise<number>;
  start(): void;
  stop(): Promise<void>;
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
  /** A cluster: compute the series held here, share them, use every member's (auto-threshold-share.ts). */
  cluster?: AutoThresholdCluster;
}

export interface AutoThresholdCluster {
  share: ThresholdShare;
  /** The series' shard when this member computes it (it holds the shard), else undefined. */
  heldShard(dbname: DbName, name: string): ShardRef | undefined;
  /** The shards held here now: one left without series (its monitors deleted) has its record deleted. */
  heldShards(): Iterable<ShardRef>;
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
  let computed = new Map<string, AutoThreshold>();
  /** A cluster: what this member computed last; a record read back wins only when it is newer (another holder). */
  let own = new Map<string, AutoThreshold>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  const enabled = (): boolean => opts.settings.get('autoThreshold') === 'true';

  /** The thresholds of every series this process computes (a cluster: the ones it holds), by shard when shared. */
  async function compute(now: number): Promise<{ own: Map<string, AutoThreshold>; shards: ShardThresholds[] }> {
    const asked = Number(opts.settings.get('autoThresholdRange'));
    const rangeH = (ALLOWED_RANGES_H as readonly number[]).includes(asked) ? asked : 168;
    const own = new Map<string, AutoThreshold>();
    const shards = new Map<string, ShardThresholds>();
    for (const ref of opts.cluster?.heldShards() ?? []) {
      shards.set(shardKey(ref.group, ref.shard), { group: ref.group, shard: ref.shard, entries: [] });
    }
    for (const { dbname, name } of opts.history.series()) {
      if (opts.skip?.(dbname)) continue;
      const ref = opts.cluster?.heldShard(dbname, name);
      if (opts.cluster && !ref) continue;
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
      // A held shard is published even when none of its series has thresholds: its stored record is then deleted.
      let shard: ShardThresholds | undefined;
      if (ref) {
        const k = shardKey(ref.group, ref.shard);
        shard = shards.get(k) ?? { ...ref, entries: [] };
        shards.set(k, shard);
      }
      if (!t) continue;
      own.set(thresholdKey(dbname, name), t);
      shard?.entries.push({ dbname, name, t });
    }
    opts.log.debug({ monitors: own.size, rangeH }, 'auto thresholds recomputed');
    return { own, shards: [...shards.values()] };
  }

  const withOwn = (all: Map<string, AutoThreshold>): Map<string, AutoThreshold> => {
    for (const [k, v] of own) {
      const read = all.get(k);
      if (!read || read.computedAtMs < v.computedAtMs) all.set(k, v);
    }
    return all;
  };

  const apply = (all: Map<string, AutoThreshold>): void => {
    if (enabled()) computed = withOwn(all);
  };

  async function run(): Promise<number> {
    if (!enabled()) {
      computed = own = new Map<string, AutoThreshold>();
      return 0;
    }
    const now = clock();
    const done = await compute(now);
    own = done.own;
    if (!opts.cluster) {
      computed = own;
      return own.size;
    }
    await opts.cluster.share.publish(done.shards, now);
    // Every member's records, this one's just written among them (unless a read started later came first).
    await opts.cluster.share.refresh(apply);
    return own.size;
  }

  const api: AutoThresholds = {
    get: (dbname, name) => computed.get(thresholdKey(dbname, name)),
    recompute() {
      running ??= run().finally(() => {
        running = undefined;
      });
      return running;
    },
    start() {
      if (timer) return;
      // The share watches the bucket from its construction; from here another member's write is read and applied.
      opts.cluster?.share.follow(apply);
      timer = setInterval(() => {
        api.recompute().catch((err: unknown) => opts.log.error({ err }, 'auto threshold recompute failed'));
      }, opts.intervalMs ?? HOUR_MS);
      timer.unref();
      api.recompute().catch((err: unknown) => opts.log.error({ err }, 'auto threshold recompute failed'));
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await opts.cluster?.share.stop();
    },
  };
  return api;
}
