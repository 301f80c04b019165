/**
 * The history's follower side in a cluster (docs/cluster.md "History"): each instance reads the WAL records the
 * other instances write (history-wal.ts `follow`) into its in-memory series, so every instance knows every series'
 * latest status and the open hour's rows whoever runs the monitor, and the holder of a series has every row of the
 * hour when it compacts it, those an earlier holder wrote included.
 *
 * A flush announces its WAL record through the store's change feed (one NOTIFY per flush and writer, in the flush's
 * transaction; never one per result): a follower then reads that writer's new records (one range read). A gap in the
 * feed, a range delete, and a timer every `intervalMs` read every writer's new records (a skip-scan: two reads per
 * writer and hour). Reads run one at a time; each record is read once (per-writer cursors).
 *
 * A member keeps the rows of the series it compacts (it holds their shard) and of those loaded for a read; of the
 * others it follows the latest status only (`keepRows`), and marks them partial (series-state.ts): rows it had are
 * dropped. `load` reads a partial series' rows back from the WAL — every writer's, in the follow order (no record is
 * applied meanwhile) — before its holder compacts it or a read needs its open hours (docs/cluster.md "History").
 */
import type { Logger } from 'pino';
import type { KvKey, KvStore } from '../../core/storage/kv-store.js';
import { BUCKET, type Extra } from './series.repo.js';
import { dropChunks, latestFromRow, markClosed, replayRow, seriesKey, type SeriesState } from './series-state.js';
import { WAL_BUCKET, walRef, type HistoryWal, type WalRef } from './history-wal.js';
import { STATUS_CODE, type DbName, type LatestStatus } from './types.js';
import type { RawRow } from './result-codec.js';
import type { OriginRegistry, ResultOrigin } from './origins.js';

/** What a follower learns about a series' newest result (the dashboard's last result). */
export interface RemoteLatest {
  latest: LatestStatus;
  metrics?: Record<string, number>;
  details?: Record<string, unknown>;
  /** Where it ran (origins.ts); undefined when unknown. */
  origin?: ResultOrigin;
}

export interface FollowDeps {
  store: KvStore;
  wal: HistoryWal;
  log: Logger;
  state(db: DbName, name: string): SeriesState;
  /** The oldest hour followed. */
  fromHour(): number;
  /** Chunks of hours before this are closed: a row arriving for one must be compacted (again) by the holder. */
  closeHour(): number;
  onClosedRows(s: SeriesState): void;
  onLatest?: (l: RemoteLatest) => void;
  /** Resolves the origins of the newest rows before onLatest (an instance started after this one registers its own). */
  origins?: OriginRegistry;
  intervalMs: number;
  /** False: follow only the series' latest status (it is marked partial and its rows leave memory). Absent: all. */
  keepRows?: (s: SeriesState) => boolean;
}

export class HistoryFollower {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  /** Per series: the message/details of its newest flagged row read (an unflagged row repeats them). */
  private readonly extraOf = new WeakMap<SeriesState, Extra>();
  private stopped = false;
  /** Series to load at the queued load step (`load`); undefined when no step is queued. */
  private toLoad: Set<SeriesState> | undefined;
  private loadStep: Promise<void> | undefined;

  constructor(private readonly d: FollowDeps) {}

  /**
   * Reads every WAL row of `targets` into memory and clears their `partial`; resolves when done. Requests made before
   * the step starts share it (one WAL read); a row already in memory comes again and its buffer keeps it once.
   */
  load(targets: Iterable<SeriesState>): Promise<void> {
    const set = (this.toLoad ??= new Set());
    for (const s of targets) set.add(s);
    if (this.loadStep) return this.loadStep;
    const step = this.chain.then(async () => {
      this.toLoad = undefined;
      this.loadStep = undefined;
      if (!this.stopped) await this.loadNow(set);
    });
    this.loadStep = step;
    this.chain = step.catch((err: unknown) => this.d.log.warn({ err }, 'history: loading series from the WAL failed'));
    return step;
  }

  private async loadNow(targets: ReadonlySet<SeriesState>): Promise<void> {
    const byKey = new Map<string, SeriesState>();
    for (const s of targets) if (s.partial) byKey.set(seriesKey(s.db, s.name), s);
    if (byKey.size === 0) return;
    const names = new Set([...byKey.values()].map((s) => s.name));
    const rows = await this.d.wal.scan((db, name) => names.has(name) && byKey.has(seriesKey(db, name)));
    this.replayLoaded(
      byKey.values(),
      rows.map(({ db, name, row }) => ({ s: byKey.get(seriesKey(db, name))!, row })),
    );
  }

  /**
   * Replays the rows of a partial series as its holder has them in memory (history.service.ts `openRows`: every row
   * of the hours the WAL holds) and clears its `partial`, on the follow chain (no record is applied meanwhile).
   * The caller marked the series kept (keepRows) before it asked the holder: a row followed since is in memory already
   * (the holder may not have had it yet), and a row the holder had that is followed later comes again: the buffer
   * keeps it once. Closed hours are merged with their stored chunk on read (the holder may have compacted them).
   */
  loadRows(s: SeriesState, rows: readonly RawRow[]): Promise<void> {
    const step = this.chain.then(() => {
      if (this.stopped || !s.partial) return;
      this.replayLoaded(
        [s],
        rows.map((row) => ({ s, row })),
      );
      markClosed(s, this.d.closeHour());
    });
    this.chain = step.catch((err: unknown) => this.d.log.warn({ err }, 'history: loading a series failed'));
    return step;
  }

  private replayLoaded(series: Iterable<SeriesState>, rows: ReadonlyArray<{ s: SeriesState; row: RawRow }>): void {
    const closeHour = this.d.closeHour();
    let closed: SeriesState | undefined;
    for (const { s, row } of rows) {
      const c = replayRow(s, row);
      if (c.hour < closeHour) {
        // Its holder may have compacted the hour already: reads and a compaction here merge the stored chunk.
        c.needsMerge = true;
        closed = s;
      }
    }
    for (const s of series) s.partial = false;
    if (closed) this.d.onClosedRows(closed);
  }

  /** Follows the feed and the timer (register before the start's replay: nothing committed meanwhile is missed). */
  start(): void {
    this.unwatch = this.d.store.watch(WAL_BUCKET, (key: KvKey | undefined) => {
      const ref = key === undefined ? undefined : walRef(key);
      this.sync(ref).catch(() => undefined); // logged by sync
    });
    this.timer = setInterval(() => {
      this.sync().catch(() => undefined);
    }, this.d.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    this.unwatch?.();
    clearInterval(this.timer);
  }

  /** Reads the other writers' new records (one writer's hour with a hint) into memory; resolves when applied. */
  sync(hint?: WalRef): Promise<void> {
    const run = this.chain.then(async () => {
      if (this.stopped) return;
      const rows = await this.d.wal.follow(this.d.fromHour(), hint);
      if (rows.length > 0) await this.apply(rows);
    });
    this.chain = run.catch((err: unknown) => this.d.log.warn({ err }, 'history: following the WAL failed'));
    return run;
  }

  private async apply(rows: Array<{ db: DbName; name: string; row: RawRow }>): Promise<void> {
    // The newest incoming row per series, and the extras of those that failed with a new message, read BEFORE any
    // row is applied: a reader never sees a new latest status without its message.
    const newest = new Map<SeriesState, RawRow>();
    // Each row's series, looked up once (the key is built per lookup).
    const states = rows.map(({ db, name }) => this.d.state(db, name));
    rows.forEach(({ row }, i) => {
      const s = states[i]!;
      if (row.ts >= s.lastTs && row.ts >= (newest.get(s)?.ts ?? -Infinity)) newest.set(s, row);
    });
    const flagged = [...newest].filter(([, row]) => row.extra && row.code !== STATUS_CODE.OK);
    if (flagged.length > 0) {
      const keys = flagged.map(([s, row]) => [s.db, s.name, row.ts]);
      const extras = await this.d.store.bucket(BUCKET.extra).getMany<Extra>(keys);
      flagged.forEach(([s], i) => this.extraOf.set(s, extras[i] ?? {}));
    }
    // A failed dictionary read leaves those origins unknown here (the rows are applied all the same).
    await this.d.origins?.resolve([...newest.values()].map((row) => row.origin)).catch(() => undefined);
    const closeHour = this.d.closeHour();
    const keep = this.d.keepRows ? new Map<SeriesState, boolean>() : undefined;
    for (let i = 0; i < rows.length; i++) {
      const s = states[i]!;
      if (keep) {
        let k = keep.get(s);
        if (k === undefined) {
          keep.set(s, (k = this.d.keepRows!(s)));
          if (!k) dropRows(s);
        }
        if (!k) {
          latestFromRow(s, rows[i]!.row);
          continue;
        }
      }
      const c = replayRow(s, rows[i]!.row);
      if (c.hour < closeHour) {
        // A row of a closed hour (its writer flushed late): the holder compacts it again, reads merge the stored chunk.
        c.dirty = true;
        c.needsMerge = true;
        this.d.onClosedRows(s);
      }
    }
    for (const [s, row] of newest) {
      if (row.extra && row.code === STATUS_CODE.OK) this.extraOf.delete(s);
      if (!s.latest || s.latest.ts !== row.ts) continue;
      const extra = this.extraOf.get(s);
      if (extra?.m !== undefined && row.code !== STATUS_CODE.OK) s.latest.message = extra.m;
      const origin = this.d.origins?.get(row.origin);
      this.d.onLatest?.({ latest: s.latest, metrics: row.metrics, details: extra?.d, origin });
    }
  }
}

/** A series followed as its latest status only: memory no longer holds all its rows (those written here stay). */
function dropRows(s: SeriesState): void {
  s.partial = true;
  if (s.chunks.length > 0) dropChunks(s, (c) => c.fresh.length === 0 && c.pendingExtras.length === 0);
}
