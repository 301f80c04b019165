/**
 * What one history flush writes (history.service.ts runs it): the new rows of the hours still open go to the WAL
 * (history-wal.ts) — with one process the current hour, in a cluster also the hour closed less than the grace ago and
 * every hour of a series held elsewhere; the other chunks holding rows not yet in hist.raw are compacted into their
 * monitor-hour chunk and day-block rollup, merged with what is stored. `settle` applies the outcome of the batch to
 * the in-memory series (restoring everything for a retry when it failed).
 */
import type { BatchOp } from '../../core/storage/kv-store.js';
import { decodeChunk, encodeChunk, type RawRow } from './result-codec.js';
import { decodeDayBlock, encodeDayBlock, encodeRollup, rollupOf } from './rollup.js';
import { BUCKET, latestOp, putOp, type SeriesAt, type SeriesRepo } from './series.repo.js';
import { dropChunks, latestValue, mergeRows, type MemChunk, type SeriesState } from './series-state.js';
import type { WalRow } from './history-wal.js';
import { RowBuffer } from './row-buffer.js';
import { dayStart, hourStart } from './types.js';
import { HOUR_MS } from '../../core/time.js';

/**
 * The hours a flush writes to the WAL: closeHour ≤ hour ≤ curHour (with one process closeHour = curHour, the open
 * hour). Any other chunk holding rows not yet in hist.raw is compacted — by its holder; a series not held here
 * writes all its new rows to the WAL, for the holder to compact.
 */
export interface FlushWindow {
  curHour: number;
  closeHour: number;
  /** Several processes share the store (docs/cluster.md "History"). */
  cluster: boolean;
  /** This instance compacts the series (always, with one process). */
  held: (s: SeriesState) => boolean;
}
export const inWalWindow = (c: MemChunk, w: FlushWindow): boolean => c.hour >= w.closeHour && c.hour <= w.curHour;
export const toCompact = (c: MemChunk, w: FlushWindow): boolean => !inWalWindow(c, w) && (c.dirty || c.inWal);
export const hasClosedWal = (s: SeriesState, w: FlushWindow): boolean => {
  for (const c of s.chunks) if (c.inWal && !inWalWindow(c, w)) return true;
  return false;
};

/**
 * Merges what is stored into the chunks about to be compacted (held series only; with one process only those that
 * may have a stored chunk). One store read for the whole flush, not one per series: at an hour's close a cluster
 * member compacts up to `compactPerFlush` series per flush, and on PostgreSQL each read is a round trip.
 */
export async function mergeStored(repo: SeriesRepo, list: SeriesState[], w: FlushWindow): Promise<void> {
  const need: MemChunk[] = [];
  const refs: SeriesAt[] = [];
  for (const s of list) {
    if (!w.held(s)) continue;
    // In a cluster another holder may have compacted the hour before (a handover, late rows): always merge.
    for (const c of s.chunks) {
      if (!toCompact(c, w) || !(c.needsMerge || w.cluster)) continue;
      need.push(c);
      refs.push({ db: s.db, name: s.name, t: c.hour });
    }
  }
  if (need.length === 0) return;
  const stored = await repo.getMany('raw', refs);
  need.forEach((c, i) => {
    const bytes = stored[i];
    if (bytes) c.buf = RowBuffer.of(c.hour, mergeRows(decodeChunk(c.hour, bytes), c.buf.rows()));
    c.needsMerge = false;
  });
}

/** The stored day blocks the compacted chunks of each series fall in (read before building the batch, in one read). */
export async function loadDayBlocks(
  repo: SeriesRepo,
  list: SeriesState[],
  w: FlushWindow,
): Promise<Map<SeriesState, Map<number, Map<number, Uint8Array>>>> {
  const out = new Map<SeriesState, Map<number, Map<number, Uint8Array>>>();
  const refs: SeriesAt[] = [];
  const blocksOf: Array<Map<number, Map<number, Uint8Array>>> = [];
  for (const s of list) {
    if (!w.held(s)) continue;
    const days = [...new Set([...s.chunks].filter((c) => toCompact(c, w)).map((c) => dayStart(c.hour)))];
    if (days.length === 0) continue;
    const blocks = new Map<number, Map<number, Uint8Array>>(days.map((d) => [d, new Map()]));
    out.set(s, blocks);
    // In a cluster the day block may hold hours another instance compacted: always read it.
    for (const d of days) {
      if (!w.cluster && d > s.maxStoredHour) continue;
      refs.push({ db: s.db, name: s.name, t: d });
      blocksOf.push(blocks);
    }
  }
  if (refs.length === 0) return out;
  const stored = await repo.getMany('day', refs);
  refs.forEach((r, i) => {
    const bytes = stored[i];
    if (bytes) blocksOf[i]!.set(r.t, decodeDayBlock(bytes));
  });
  return out;
}

export interface Written {
  s: SeriesState;
  /** Chunks compacted into hist.raw + hist.day. */
  chunks: MemChunk[];
  /** New rows carried by this flush's WAL records, per chunk (restored on failure). */
  walled: Array<[MemChunk, RawRow[]]>;
  extras: Map<MemChunk, number>;
  trans: number;
  latest: boolean;
}

export function buildOps(
  list: SeriesState[],
  dayBlocks: Map<SeriesState, Map<number, Map<number, Uint8Array>>>,
  win: FlushWindow,
): { ops: BatchOp[]; written: Written[]; walRows: Map<number, WalRow[]> } {
  const ops: BatchOp[] = [];
  const written: Written[] = [];
  const walRows = new Map<number, WalRow[]>();
  for (const s of list) {
    const w: Written = { s, chunks: [], walled: [], extras: new Map(), trans: s.pendingTrans.length, latest: false };
    const blocks = dayBlocks.get(s);
    const touched = new Set<number>();
    const held = win.held(s);
    for (const c of s.chunks) {
      if (inWalWindow(c, win) || !held) {
        if (c.fresh.length === 0) continue;
        let rows = walRows.get(c.hour);
        if (!rows) walRows.set(c.hour, (rows = []));
        for (const row of c.fresh) rows.push({ db: s.db, name: s.name, row });
        w.walled.push([c, c.fresh]);
        c.fresh = [];
        c.inWal = true;
      } else {
        const block = blocks?.get(dayStart(c.hour));
        if (!toCompact(c, win) || c.needsMerge || !block) continue;
        const rows = c.buf.rows();
        ops.push(putOp(BUCKET.raw, s.db, s.name, c.hour, encodeChunk(c.hour, rows)));
        block.set((c.hour - dayStart(c.hour)) / HOUR_MS, encodeRollup(rollupOf(rows)));
        touched.add(dayStart(c.hour));
        c.fresh = [];
        w.chunks.push(c);
      }
      for (const [ts, e] of c.pendingExtras) ops.push(putOp(BUCKET.extra, s.db, s.name, ts, e));
      w.extras.set(c, c.pendingExtras.length);
      c.dirty = false;
    }
    for (const d of touched) ops.push(putOp(BUCKET.day, s.db, s.name, d, encodeDayBlock(blocks!.get(d)!)));
    for (const [ts, code] of s.pendingTrans) ops.push(putOp(BUCKET.trans, s.db, s.name, ts, code));
    if ((s.latestDirty || w.chunks.length > 0) && s.latest) {
      ops.push(latestOp(s.db, s.name, latestValue(s.latest)));
      s.latestDirty = false;
      w.latest = true;
    }
    written.push(w);
  }
  return { ops, written, walRows };
}

export function settle(written: Written[], ok: boolean, dirty: Set<SeriesState>): void {
  for (const { s, chunks, walled, extras, trans, latest } of written) {
    if (!ok) {
      for (const c of chunks) c.dirty = true;
      for (const [c, rows] of walled) {
        c.fresh = rows.concat(c.fresh);
        c.dirty = true;
      }
      if (latest) s.latestDirty = true;
      dirty.add(s);
      continue;
    }
    s.pendingTrans.splice(0, trans);
    for (const [c, n] of extras) c.pendingExtras.splice(0, n);
    for (const c of chunks) {
      c.inWal = false;
      if (c.hour > s.maxStoredHour) s.maxStoredHour = c.hour;
      // A compacted (past) hour's size (+5 %) sizes the series' next buffer: one allocation, no growth slack.
      s.rowBytesHint = Math.ceil(c.buf.usedBytes * 1.05) + 16;
    }
    // Hours before the open one leave memory once they are in hist.raw (appends keep landing in the open hour).
    const openHour = hourStart(s.lastTs);
    dropChunks(s, (c) => !c.dirty && !c.inWal && c.hour < openHour);
  }
}
