/**
 * Read views over the history that merge stored data with what is still in memory (unflushed or open chunks,
 * pending transitions). Everything is an ordered range read on one monitor's key prefix. In a cluster, `complete`
 * first loads a series whose rows memory does not all hold (history.service.ts: held elsewhere, or just gained).
 */
import { decodeChunk, type RawRow } from './result-codec.js';
import { decodeDayBlock, decodeRollup, rollupOf, type Rollup } from './rollup.js';
import type { SeriesRepo } from './series.repo.js';
import { mergeRows, type SeriesState } from './series-state.js';
import { dayStart, type DbName } from './types.js';
import { HOUR_MS } from '../../core/time.js';

export interface HourRows {
  hour: number;
  rows: RawRow[];
}
export interface HourRollup {
  hour: number;
  rollup: Rollup;
}
export interface Transition {
  t: number;
  code: number;
}

export class HistoryReads {
  constructor(
    private readonly repo: SeriesRepo,
    private readonly stateOf: (db: DbName, name: string) => SeriesState | undefined,
    readonly now: () => number,
    /** Resolves when memory holds every row of the series in hours before `toHour` that are not stored yet. */
    private readonly complete?: (db: DbName, name: string, toHour: number) => Promise<void>,
  ) {}

  /** True when the monitor has any history. */
  hasHistory(db: DbName, name: string): boolean {
    const s = this.stateOf(db, name);
    return s !== undefined && s.lastTs !== -Infinity;
  }

  /** Raw rows of the hours fromHour ≤ hour < toHour, ascending. */
  async hourRows(db: DbName, name: string, fromHour: number, toHour: number): Promise<HourRows[]> {
    await this.complete?.(db, name, toHour);
    const map = new Map<number, RawRow[]>();
    for (const { t, v } of await this.repo.chunks(db, name, fromHour, toHour)) map.set(t, decodeChunk(t, v));
    const s = this.stateOf(db, name);
    for (const c of s?.chunks ?? []) {
      if (c.hour < fromHour || c.hour >= toHour) continue;
      const stored = map.get(c.hour);
      map.set(c.hour, c.needsMerge && stored ? mergeRows(stored, c.buf.rows()) : c.buf.rows());
    }
    return [...map.entries()].sort((a, b) => a[0] - b[0]).map(([hour, rows]) => ({ hour, rows }));
  }

  /** Raw rows with fromMs ≤ ts < toMs, ascending. */
  async rows(db: DbName, name: string, fromMs: number, toMs: number): Promise<RawRow[]> {
    const out: RawRow[] = [];
    const fromHour = Math.floor(fromMs / HOUR_MS) * HOUR_MS;
    for (const { rows } of await this.hourRows(db, name, fromHour, toMs)) {
      for (const r of rows) if (r.ts >= fromMs && r.ts < toMs) out.push(r);
    }
    return out;
  }

  /**
   * Hourly rollups of fromHour ≤ hour < toHour, ascending; hours still held in memory are rolled up on the fly.
   * `whole` false: a cluster member reads a series held elsewhere as memory has it (its hours not yet compacted may
   * miss rows; auto thresholds, whose range is days), without loading it.
   */
  async hourRollups(
    db: DbName,
    name: string,
    fromHour: number,
    toHour: number,
    withHist = true,
    whole = true,
  ): Promise<HourRollup[]> {
    if (whole) await this.complete?.(db, name, toHour);
    const map = new Map<number, Rollup>();
    for (const { t: day, v } of await this.repo.dayBlocks(db, name, dayStart(fromHour), toHour)) {
      for (const [h, bytes] of decodeDayBlock(v)) {
        const hour = day + h * HOUR_MS;
        if (hour >= fromHour && hour < toHour) map.set(hour, decodeRollup(bytes, withHist));
      }
    }
    const s = this.stateOf(db, name);
    const mem = (s?.chunks ?? []).filter((c) => c.hour >= fromHour && c.hour < toHour);
    if (mem.length > 0) {
      const merge = mem.filter((c) => c.needsMerge);
      const stored = merge.length
        ? await this.repo.getChunks(
            db,
            name,
            merge.map((c) => c.hour),
          )
        : [];
      const storedBy = new Map(merge.map((c, i) => [c.hour, stored[i]]));
      for (const c of mem) {
        const bytes = storedBy.get(c.hour);
        const rows = bytes ? mergeRows(decodeChunk(c.hour, bytes), c.buf.rows()) : c.buf.rows();
        map.set(c.hour, rollupOf(rows));
      }
    }
    return [...map.entries()].sort((a, b) => a[0] - b[0]).map(([hour, rollup]) => ({ hour, rollup }));
  }

  /** The transition in force at fromMs (if known) and every transition with fromMs < t < toMs, ascending. */
  async transitions(db: DbName, name: string, fromMs: number, toMs: number): Promise<Transition[]> {
    const byTs = new Map<number, number>();
    const before = await this.repo.transitionAtOrBefore(db, name, fromMs);
    if (before) byTs.set(before.t, before.v);
    for (const { t, v } of await this.repo.transitions(db, name, fromMs, toMs)) byTs.set(t, v);
    const s = this.stateOf(db, name);
    let memBefore: [number, number] | undefined;
    for (const [t, code] of s?.pendingTrans ?? []) {
      if (t >= fromMs && t < toMs) byTs.set(t, code);
      else if (t < fromMs && (!memBefore || t > memBefore[0])) memBefore = [t, code];
    }
    if (memBefore && (!before || memBefore[0] > before.t)) byTs.set(memBefore[0], memBefore[1]);
    const all = [...byTs.entries()].sort((a, b) => a[0] - b[0]).map(([t, code]) => ({ t, code }));
    // Keep only the last one at or before fromMs.
    let first = 0;
    for (let i = 0; i < all.length; i++) if (all[i]!.t <= fromMs) first = i;
    return all.slice(first);
  }

  /** Ts of the newest result, or undefined. */
  lastTs(db: DbName, name: string): number | undefined {
    const s = this.stateOf(db, name);
    return s && s.lastTs !== -Infinity ? s.lastTs : undefined;
  }
}
