/**
 * In-memory state of one monitor's series: the chunks not yet flushed (or still open), pending transitions, and the
 * latest status. Pure data + synchronous helpers; history.service.ts owns the I/O.
 *
 * Message/details ("extras") are stored only when they change: a row is flagged hasExtra when its message/details
 * differ from the previous row's in the same chunk (the first row of a chunk with a message is always flagged; a row
 * whose message disappears is flagged with an empty extra). An unflagged row's message/details are those of the
 * nearest earlier flagged row of its chunk, so reconstruction never crosses a chunk (hour) and purging by hour is
 * safe. Rows appended out of ts order are always flagged.
 */
import type { Fence } from '../../core/storage/claims.js';
import type { Extra, LatestValue } from './series.repo.js';
import type { RawRow } from './result-codec.js';
import { RowBuffer } from './row-buffer.js';
import { STATUSES, type DbName, type LatestStatus, type ResultRecord, STATUS_CODE, hourStart } from './types.js';

export interface MemChunk {
  hour: number;
  /** The rows held in memory, encoded (row-buffer.ts); `buf.rows()` decodes them in ts order. */
  buf: RowBuffer;
  /** Extras not yet written, oldest first. */
  pendingExtras: Array<[number, Extra]>;
  /** A stored chunk for this hour may hold rows that are not in memory: merge before writing or reading. */
  needsMerge: boolean;
  /** Rows appended and not yet written anywhere (WAL or chunk). */
  dirty: boolean;
  /** Rows appended since the last write, in append order (what the next WAL record of the open hour carries). */
  fresh: RawRow[];
  /** Some rows live only in the open-hour WAL (history-wal.ts): the chunk must be compacted once its hour is over. */
  inWal: boolean;
  /** Message/details key of the last in-order row (for change detection). */
  lastKey: string;
}

export interface SeriesState {
  db: DbName;
  name: string;
  latest?: LatestStatus;
  lastCode?: number;
  lastTs: number;
  /** The highest hour that may have a stored chunk. */
  maxStoredHour: number;
  /** Bytes the last compacted hour's rows took in memory: the next hour's row buffer starts at that size. */
  rowBytesHint: number;
  /**
   * The hours held in memory (one or two: the open hour, and the previous one until it is compacted). An array, not a
   * Map: a Map's table took ~390 B of heap per series (decision 171).
   */
  chunks: MemChunk[];
  /** Transitions not yet written, oldest first: [ts, code]. */
  pendingTrans: Array<[number, number]>;
  latestDirty: boolean;
  /** Cluster: the shard lease fence its unwritten appended rows were recorded under (history-fence.ts). */
  fence?: Fence;
  /**
   * Cluster: memory may lack some of the series' rows still in the WAL (rows other instances wrote were followed as
   * the latest status only, history-follow.ts): reads and compaction load them first (`HistoryFollower.load`).
   */
  partial: boolean;
  /** Cluster: a series held elsewhere keeps following its rows until then (it was loaded for a read). */
  keepRowsUntilMs: number;
}

export const UNKNOWN_KEY = '\u0000unknown';

export function seriesKey(db: string, name: string): string {
  return `${db}\u0000${name}`;
}

export function newSeries(db: DbName, name: string, stored?: LatestValue): SeriesState {
  // Every field is in the literal (those set later too): the object keeps one shape with its fields in-object, no
  // out-of-object property array added per series when the first result or fence comes.
  const s: SeriesState = {
    db,
    name,
    latest: undefined,
    lastCode: undefined,
    fence: undefined,
    lastTs: -Infinity,
    maxStoredHour: -Infinity,
    rowBytesHint: 0,
    chunks: [],
    pendingTrans: [],
    latestDirty: false,
    partial: false,
    keepRowsUntilMs: 0,
  };
  if (stored) {
    const [ts, code, resp, message, origin] = stored;
    s.maxStoredHour = hourStart(ts);
    setLatest(s, { ts, code, resp, origin }, typeof message === 'string' ? message : undefined);
  }
  return s;
}

/**
 * Makes `row` the series' latest result (lastTs, lastCode, latest), with `message` and the row's origin if any. The
 * latest object is updated in place when it has the same fields (the steady state: a result every interval, no message
 * or the same kind): a new object per result lives one interval, so every result would be copied twice by the
 * young-generation GC and promoted — a cluster member does this for every monitor of the cluster (decision 170).
 */
export function setLatest(
  s: SeriesState,
  row: Pick<RawRow, 'ts' | 'code' | 'resp' | 'origin'>,
  message: string | undefined,
): void {
  s.lastTs = row.ts;
  s.lastCode = row.code;
  const status = STATUSES[row.code] ?? 'EXCEPTION';
  const l = s.latest;
  if (l && 'message' in l === (message !== undefined) && 'originId' in l === Boolean(row.origin)) {
    l.ts = row.ts;
    l.status = status;
    l.responseTimeMs = row.resp;
    if (message !== undefined) l.message = message;
    if (row.origin) l.originId = row.origin;
    return;
  }
  s.latest = { dbname: s.db, name: s.name, ts: row.ts, status, responseTimeMs: row.resp };
  if (message !== undefined) s.latest.message = message;
  if (row.origin) s.latest.originId = row.origin;
}

/** The series' in-memory chunk of `hour`, if any. */
export function chunkAt(s: SeriesState, hour: number): MemChunk | undefined {
  for (const c of s.chunks) if (c.hour === hour) return c;
  return undefined;
}

/** Hours before `closeHour` may have been compacted by their holder: reads and a compaction merge the stored chunk. */
export function markClosed(s: SeriesState, closeHour: number): void {
  for (const c of s.chunks) if (c.hour < closeHour) c.needsMerge = true;
}

/** Drops the in-memory chunks `drop` picks (in place). */
export function dropChunks(s: SeriesState, drop: (c: MemChunk) => boolean): void {
  let kept = 0;
  for (const c of s.chunks) if (!drop(c)) s.chunks[kept++] = c;
  s.chunks.length = kept;
}

function chunkFor(s: SeriesState, hour: number): MemChunk {
  let c = chunkAt(s, hour);
  if (!c) {
    const needsMerge = hour <= s.maxStoredHour;
    c = {
      hour,
      buf: new RowBuffer(hour, s.rowBytesHint),
      pendingExtras: [],
      needsMerge,
      dirty: true,
      fresh: [],
      inWal: false,
      lastKey: needsMerge ? UNKNOWN_KEY : '',
    };
    // An exact-sized copy, not a push: a pushed empty array reserves 17 slots (decision 171).
    s.chunks = s.chunks.length === 0 ? [c] : s.chunks.concat(c);
  }
  return c;
}

/**
 * Applies one record to the series state (synchronous, O(1) for in-order appends); `origin`: the id of the process
 * that ran it (origins.ts; 0 = unknown).
 */
export function applyRecord(s: SeriesState, rec: ResultRecord, origin = 0): void {
  const code = STATUS_CODE[rec.status];
  if (code === undefined) throw new TypeError(`unknown status ${String(rec.status)}`);
  if (!Number.isFinite(rec.ts)) throw new TypeError('ts must be a finite Unix ms number');
  const ts = Math.round(rec.ts);
  const c = chunkFor(s, hourStart(ts));
  const row: RawRow = {
    ts,
    code,
    resp: Math.fround(Number.isFinite(rec.responseTimeMs) ? rec.responseTimeMs : 0),
    extra: false,
  };
  if (rec.metrics && Object.keys(rec.metrics).length > 0) row.metrics = rec.metrics;
  if (origin !== 0) row.origin = origin;
  const late = ts < c.buf.lastTs;
  const hasExtra = rec.message !== undefined || rec.details !== undefined;
  const key = hasExtra ? JSON.stringify([rec.message ?? null, rec.details ?? null]) : '';
  if (late || key !== c.lastKey) {
    const extra: Extra = {};
    if (rec.message !== undefined) extra.m = rec.message;
    if (rec.details !== undefined) extra.d = rec.details;
    row.extra = true;
    c.pendingExtras.push([ts, extra]);
  }
  if (!late) c.lastKey = key;
  c.buf.append(row);
  c.fresh.push(row);
  c.dirty = true;
  if (ts >= s.lastTs) {
    // The stored latest is rewritten when the status or message changes (and at each hour's compaction); between
    // those, a restart takes ts and response time from the WAL replay (replayRow).
    if (code !== s.lastCode || rec.message !== s.latest?.message) s.latestDirty = true;
    if (code !== s.lastCode) s.pendingTrans.push([ts, code]);
    setLatest(s, row, rec.message);
  }
}

/**
 * Puts a row read back from the open-hour WAL into the series (after a restart). Its extras and transition were
 * written directly when it was flushed; the latest status keeps the stored message when the status is the same.
 */
export function replayRow(s: SeriesState, row: RawRow): MemChunk {
  const c = chunkFor(s, hourStart(row.ts));
  if (c.buf.count === 0) c.dirty = false;
  c.buf.append(row);
  c.inWal = true;
  c.lastKey = UNKNOWN_KEY;
  latestFromRow(s, row);
  return c;
}

/**
 * A row read back (WAL replay, a followed row) becomes the latest status when it is the newest; the latest message is
 * kept while the status stays the same (a row carries no message: its extra is written apart).
 */
export function latestFromRow(s: SeriesState, row: RawRow): void {
  if (row.ts >= s.lastTs) setLatest(s, row, s.latest && s.lastCode === row.code ? s.latest.message : undefined);
}

/** Union of stored rows and memory rows by ts; on equal ts the memory row wins. Rows keep their origin. */
export function mergeRows(stored: readonly RawRow[], mem: readonly RawRow[]): RawRow[] {
  if (stored.length === 0) return mem.slice();
  const memTs = new Set(mem.map((r) => r.ts));
  const out = stored.filter((r) => !memTs.has(r.ts)).concat(mem);
  out.sort((a, b) => a.ts - b.ts);
  return out;
}

export function latestValue(l: LatestStatus): LatestValue {
  const v: LatestValue = [l.ts, STATUS_CODE[l.status], l.responseTimeMs];
  if (l.message !== undefined || l.originId) v.push(l.message?.slice(0, 500) ?? null);
  if (l.originId) v.push(l.originId);
  return v;
}
