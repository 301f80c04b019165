/**
 * The results history: `append` enqueues in memory (synchronous, O(1), no I/O); a timer flushes in large atomic
 * batches: the current hour's new rows as one WAL record (history-wal.ts), closed hours compacted into monitor-hour
 * chunks and their rollups, extras, transitions and changed latest statuses. Reads merge what is stored with what is
 * in memory (the open hour always is; a restart replays the WAL), so queries see every appended result at once.
 *
 * Durability: a result is on disk after the next flush (every `flushIntervalMs`, default 2 s, or sooner when more
 * than `maxPendingRows` rows wait). A crash loses at most the results appended since the last completed flush.
 * `close()` flushes everything.
 *
 * In a cluster (`holds` given; docs/cluster.md "History") every instance shares one store: each appends only the
 * series whose shard lease it holds, follows the other instances' WAL records (history-follow.ts: the rows of the
 * series it holds, the latest status of the others), and compacts a closed hour (`closeGraceMs` after it ends) only
 * for the series it holds then, merged with what is stored; a series gained, or read here while held elsewhere, is
 * loaded from the WAL first (`partial`); the WAL keeps the previous hour for late rows, handovers and restarts, and
 * any instance drops older hours. Every
 * write is fenced by the shard lease it was recorded (or compacted) under: a flush drops the writes of shards a newer
 * holder stamped and writes the rest (history-fence.ts).
 *
 * Retention (`purge()`): raw chunks and extras are kept `retentionHours()` hours (whole hours: a chunk goes when its
 * hour is entirely older than the cutoff); hourly rollups (in day blocks) and status transitions are kept
 * `rollupRetentionDays` (default 400 days, whole UTC days).
 */
import type { Logger } from 'pino';
import type { KvStore } from '../../core/storage/kv-store.js';
import { type Fence, staleFenceKeys } from '../../core/storage/claims.js';
import { FlushFences, fenceAppend, discardPending } from './history-fence.js';
import { decodeRollup, type Rollup } from './rollup.js';
import { createSeriesRepo } from './series.repo.js';
import { applyRecord, dropChunks, latestFromRow, markClosed, newSeries, replayRow, seriesKey } from './series-state.js';
import type { MemChunk, SeriesState } from './series-state.js';
import { createHistoryWal } from './history-wal.js';
import { HistoryFollower, type RemoteLatest } from './history-follow.js';
import { buildOps, hasClosedWal, loadDayBlocks, mergeStored, settle, type FlushWindow } from './history-batch.js';
import { DBNAMES, dayStart, hourStart, isDbName, type DbName, type LatestStatus, type ResultRecord } from './types.js';
import { HistoryReads } from './history.reads.js';
import type { RawRow } from './result-codec.js';
import { recent } from './history-recent.js';
import { OriginRegistry, type ResultOrigin } from './origins.js';
import { DAY_MS, HOUR_MS } from '../../core/time.js';

export interface HistoryServiceOptions {
  store: KvStore;
  log: Logger;
  clock?: () => number;
  /** Raw retention in hours (the dataRetention setting), read at each purge. */
  retentionHours: () => number;
  rollupRetentionDays?: number;
  flushIntervalMs?: number;
  maxPendingRows?: number;
  /** Ops per store batch (default 20,000). */
  batchOps?: number;
  /** Series compacted per flush after an hour closes (default 1,000; see history-wal.ts). */
  compactPerFlush?: number;
  /** Runs purge() this often (default 1 h; 0 = never, the caller purges). */
  purgeIntervalMs?: number;
  /**
   * A cluster: true when this instance compacts the series (it holds its shard lease). Absent: one process holds
   * every series (LMDB).
   */
  holds?: (db: DbName, name: string) => boolean;
  /** Cluster: a closed hour is compacted this long after its end (default 10 s: an earlier holder's last flush). */
  closeGraceMs?: number;
  /** Cluster: the other writers' WAL records are read at least this often (default 30 s; the feed announces each). */
  followIntervalMs?: number;
  /** Cluster: a series another instance writes has a new latest result. */
  onRemoteLatest?: (l: RemoteLatest) => void;
  /** Where this process's results come from (origins.ts): stamped on every appended row. Absent: unknown. */
  origin?: ResultOrigin;
  /** Cluster: the fence of the shard lease this instance holds for the series now (its compaction's fence). */
  fenceOf?: (db: DbName, name: string) => Fence | undefined;
  /** Cluster: appended rows dropped because their lease's fence was refused (a newer holder stamped it). */
  onFenced?: (rows: number) => void;
  /**
   * Cluster: a series held by another live member, as that member's `openRows` answers (cluster/series-fetch.ts);
   * undefined when it cannot say (no other holder, unreachable, not held there): the series is then read from the WAL.
   */
  openRowsOf?: (db: DbName, name: string) => Promise<RawRow[] | undefined>;
}

/** Cluster: a closed hour of a series held elsewhere stays in memory this long (its holder compacts it meanwhile). */
const FOLLOWER_KEEP_MS = 10 * 60_000;
/** Cluster: a series held elsewhere that a read loaded keeps following its rows this long after the read. */
const KEEP_LOADED_MS = 10 * 60_000;
/**
 * Cluster: past this many loads from the WAL for reads within KEEP_LOADED_MS (those the series' holder did not answer:
 * `openRowsOf`), a read loads every series and the member follows every series' rows for KEEP_LOADED_MS (a client
 * walking many monitors costs one WAL read, not one per monitor).
 */
const LOAD_ALL_AFTER = 16;

export interface HistoryService extends HistoryReads {
  /** `fence`: in a cluster, the shard lease the result was recorded under (docs/cluster.md "History"). */
  append(dbname: DbName, name: string, rec: ResultRecord, fence?: Fence): void;
  latest(dbname: DbName, name: string): LatestStatus | undefined;
  latestAll(): LatestStatus[];
  /** The last n results (n ≤ 1000), newest first, with message/details/metrics. */
  recent(dbname: DbName, name: string, n: number): Promise<ResultRecord[]>;
  /** Every monitor with history. */
  series(): Array<{ dbname: DbName; name: string }>;
  /** Series in memory, those with rows there, and (cluster) those whose rows are not all there (`partial`). */
  inMemory(): { series: number; withRows: number; partial: number };
  /** The origin stamped on this process's appended rows (options.origin). */
  readonly selfOrigin?: ResultOrigin;
  /** An origin id's probe/location/instance (ids of rows read or followed so far; undefined = unknown). */
  origin(id: number | undefined): ResultOrigin | undefined;
  purge(): Promise<{ deleted: number }>;
  deleteMonitor(dbname: DbName, name: string): Promise<void>;
  flush(): Promise<void>;
  /** Cluster: reads the other instances' new WAL records now (resolves at once with one process). */
  sync(): Promise<void>;
  /** Cluster: the held set changed: closed hours of series now held are compacted, new rows read. */
  ownershipChanged(): void;
  /** Cluster: a monitor deleted (on any instance) leaves memory here; its stored history is deleteMonitor's. */
  forget(name: string): void;
  /**
   * The series' rows of the hours the WAL holds (the open and the previous hour), once memory holds all of them;
   * undefined when this instance does not hold the series (another member asks: cluster/series-fetch.ts).
   */
  openRows(dbname: DbName, name: string): Promise<RawRow[] | undefined>;
  close(): Promise<void>;
}

export const DEFAULT_ROLLUP_RETENTION_DAYS = 400;

type DayBlocks = Awaited<ReturnType<typeof loadDayBlocks>>;
const NONE: ReadonlySet<never> = new Set();

export async function createHistoryService(opts: HistoryServiceOptions): Promise<HistoryService> {
  const repo = createSeriesRepo(opts.store);
  const clock = opts.clock ?? Date.now;
  const log = opts.log;
  const batchOps = opts.batchOps ?? 20_000;
  const maxPending = opts.maxPendingRows ?? 200_000;
  const states = new Map<string, SeriesState>();
  const dirty = new Set<SeriesState>();
  let pendingRows = 0;
  let flushing: Promise<void> | undefined;
  let closed = false;
  const cluster = opts.holds !== undefined;
  const holds = (s: SeriesState): boolean => !opts.holds || opts.holds(s.db, s.name);
  /** Cluster: held series whose rows are not all in memory yet (gained) are to be loaded from the WAL. */
  let loadHeld = false;
  let loadingHeld = 0;
  /** Cluster: when the loads for reads in the last KEEP_LOADED_MS were made; until when every series is followed. */
  const readLoads: number[] = [];
  let keepAllUntilMs = 0;
  const graceMs = cluster ? (opts.closeGraceMs ?? 10_000) : 0;
  /** The held set changed or a closed hour got rows: rebuild the compaction queue at the next flush. */
  let rescan = false;
  let followerSweepHour = -Infinity;
  /** The series of the batch being written (a row appended meanwhile under a newer epoch drops their rows). */
  let inFlight: ReadonlySet<SeriesState> = NONE;
  const dropped = (s: SeriesState, rows: number): void => {
    if (rows === 0) return;
    log.warn({ monitor: s.name, rows }, 'history: rows recorded under a lost shard lease dropped (fenced)');
    opts.onFenced?.(rows);
  };

  const origins = new OriginRegistry(opts.store);
  await origins.load();
  const selfOrigin = opts.origin ? await origins.register(opts.origin) : 0;
  for (const { db, name, v } of await repo.allLatest()) {
    if (isDbName(db)) states.set(seriesKey(db, name), newSeries(db, name, v));
  }
  const wal = createHistoryWal(opts.store);
  const compactPerFlush = opts.compactPerFlush ?? 1000;
  let compactQueue: SeriesState[] = [];
  let walHour = -Infinity;
  let dropPending = false;
  /** The oldest hour the WAL may still hold rows of (Infinity: empty). */
  let walLowHour = Infinity;
  let walHighHour = -Infinity;
  const follower = cluster
    ? new HistoryFollower({
        store: opts.store,
        wal,
        log,
        state,
        fromHour: () => hourStart(clock()) - HOUR_MS,
        closeHour: () => hourStart(clock() - graceMs),
        onClosedRows: () => void (rescan = true),
        onLatest: opts.onRemoteLatest,
        origins,
        intervalMs: opts.followIntervalMs ?? 30_000,
        keepRows: (s) => holds(s) || Math.max(s.keepRowsUntilMs, keepAllUntilMs) > clock(),
      })
    : undefined;
  follower?.start();
  for (const { db, name, row } of await wal.replay()) {
    const s = state(db, name);
    if (!cluster) replayRow(s, row);
    else {
      // A member takes the latest status; the rows of the series it comes to hold are loaded when it holds them.
      latestFromRow(s, row);
      s.partial = true;
    }
    walLowHour = Math.min(walLowHour, hourStart(row.ts));
    walHighHour = Math.max(walHighHour, hourStart(row.ts));
  }

  function state(db: DbName, name: string): SeriesState {
    const key = seriesKey(db, name);
    let s = states.get(key);
    if (!s) {
      s = newSeries(db, name);
      states.set(key, s);
    }
    return s;
  }

  /** Cluster: loads the rows of the held series that are partial (gained); compaction waits for it. */
  function loadHeldSeries(): void {
    loadHeld = false;
    const targets = [...states.values()].filter((s) => s.partial && holds(s));
    if (targets.length === 0 || !follower) return;
    loadingHeld++;
    follower
      .load(targets)
      .then(
        () => void (rescan = true),
        (err: unknown) => {
          loadHeld = true;
          log.warn({ err, series: targets.length }, 'history: loading held series failed; will retry');
        },
      )
      .finally(() => loadingHeld--);
  }

  /** Cluster: resolves when memory holds every row of the series (a partial one is loaded from the WAL first). */
  async function complete(db: DbName, name: string, toHour: number): Promise<void> {
    const s = states.get(seriesKey(db, name));
    // Rows older than the previous hour were compacted by their holder (the WAL keeps the open and previous hour).
    const now = clock();
    if (!s?.partial || !follower || toHour <= hourStart(now) - 2 * HOUR_MS) return;
    if (holds(s)) return follower.load([s]); // gained: its load is queued already or joins this one
    // Kept from now on: a row followed while the holder answers stays in memory (history-follow.ts `loadRows`).
    s.keepRowsUntilMs = now + KEEP_LOADED_MS;
    const held = await opts.openRowsOf?.(db, name);
    if (held) return follower.loadRows(s, held);
    while (readLoads.length > 0 && readLoads[0]! <= now - KEEP_LOADED_MS) readLoads.shift();
    readLoads.push(now);
    if (readLoads.length > LOAD_ALL_AFTER) {
      keepAllUntilMs = now + KEEP_LOADED_MS;
      log.info({ reads: readLoads.length }, 'history: many series held elsewhere read here: following every row');
      return follower.load([...states.values()].filter((x) => x.partial));
    }
    await follower.load([s]);
  }

  /** Cluster: closed hours of series held elsewhere leave memory FOLLOWER_KEEP_MS after the hour (stored by then). */
  function sweepFollowers(nowMs: number, held: (s: SeriesState) => boolean): void {
    const before = hourStart(nowMs - FOLLOWER_KEEP_MS);
    if (before === followerSweepHour) return;
    followerSweepHour = before;
    for (const s of states.values()) {
      const old = (c: MemChunk): boolean => c.hour < before && c.fresh.length === 0 && c.pendingExtras.length === 0;
      if (s.chunks.some(old) && !held(s)) dropChunks(s, old);
    }
  }

  async function doFlush(): Promise<void> {
    const nowMs = clock();
    const curHour = hourStart(nowMs);
    const closeHour = hourStart(nowMs - graceMs);
    // Cluster: whether a series is held is decided once per flush (a lease lost mid-flush changes nothing in it).
    const heldNow = new Map<SeriesState, boolean>();
    // A held series is compacted here once all its rows are in memory (not partial: loaded after it was gained).
    const isHeld = !cluster
      ? () => true
      : (s: SeriesState): boolean => {
          let h = heldNow.get(s);
          if (h === undefined) heldNow.set(s, (h = !s.partial && holds(s)));
          return h;
        };
    if (loadHeld) loadHeldSeries();
    const probe: FlushWindow = { curHour, closeHour, cluster, held: isHeld };
    if (closeHour !== walHour || rescan) {
      // An hour closed (or the first flush after a start; in a cluster: the held set changed): every chunk of a closed
      // hour still in the WAL is compacted, compactPerFlush series per flush so the burst never blocks the event loop.
      if (closeHour !== walHour) {
        dropPending = true;
        // Cluster: the holder writes its rows of a closed hour straight into the chunk: reads here merge it from now.
        if (cluster) for (const s of states.values()) if (!isHeld(s)) markClosed(s, closeHour);
      }
      walHour = closeHour;
      rescan = false;
      compactQueue = [...states.values()].filter((s) => hasClosedWal(s, probe) && isHeld(s));
    }
    const pick = new Set(dirty);
    dirty.clear();
    pendingRows = 0;
    for (const s of compactQueue.splice(0, compactPerFlush)) pick.add(s);
    const list = [...pick].filter((s) => states.get(seriesKey(s.db, s.name)) === s);
    if (list.length > 0) {
      await mergeStored(repo, list, probe);
      await write(list, await loadDayBlocks(repo, list, probe), probe);
    }
    if (cluster) {
      sweepFollowers(nowMs, isHeld);
      if (dropPending && compactQueue.length === 0 && !loadHeld && loadingHeld === 0) {
        // Any instance drops the hours before the previous one, whoever wrote them.
        await wal.dropBefore(closeHour - HOUR_MS);
        dropPending = false;
      }
    } else if (dropPending && compactQueue.length === 0 && ![...states.values()].some((s) => hasClosedWal(s, probe))) {
      await wal.dropBefore(curHour);
      dropPending = false;
      walLowHour = walHighHour >= curHour ? curHour : Infinity;
    }
  }

  /**
   * Writes the flush's batch. In a cluster it carries the fences of its series (history-fence.ts): when the store
   * refuses stale ones, those shards' writes are dropped and the batch is rebuilt without them.
   */
  async function write(list: SeriesState[], blocks: DayBlocks, probe: FlushWindow): Promise<void> {
    const fencing = cluster && opts.fenceOf ? new FlushFences((s) => fenceNow(s, probe), dropped) : undefined;
    let todo = fencing ? fencing.prepare(list) : list;
    // With one process (LMDB) nothing below allocates: no fences, nothing in flight to watch.
    const used = fencing ? new Map(list.map((s) => [s, s.fence])) : undefined;
    if (fencing) inFlight = new Set(list);
    try {
      for (let attempt = 1; todo.length > 0; attempt++) {
        const { ops, written, walRows } = buildOps(todo, blocks, probe);
        ops.push(...wal.recordOps(walRows));
        const fences = fencing?.fences(todo);
        try {
          for (let i = 0; i < ops.length; i += batchOps) await repo.batch(ops.slice(i, i + batchOps), fences);
          settle(written, true, dirty);
          for (const hour of walRows.keys()) {
            walLowHour = Math.min(walLowHour, hour);
            walHighHour = Math.max(walHighHour, hour);
          }
          return;
        } catch (err) {
          const stale = staleFenceKeys(err);
          if (!fencing || stale.length === 0 || attempt >= 3) {
            settle(written, false, dirty);
            // A row appended meanwhile under a newer epoch of the shard: the restored rows' lease was lost.
            for (const [s, f] of used ?? [])
              if (f && s.fence && s.fence.key === f.key && s.fence.epoch > f.epoch) dropped(s, discardPending(s));
            throw err;
          }
          settle(written, false, new Set());
          todo = fencing.refuse(todo, stale);
        }
      }
    } finally {
      if (fencing) inFlight = NONE;
    }
  }

  const fenceNow = (s: SeriesState, w: FlushWindow): Fence | undefined =>
    w.held(s) ? opts.fenceOf?.(s.db, s.name) : undefined;

  async function flush(): Promise<void> {
    while (flushing) await flushing.catch(() => undefined);
    flushing = doFlush().finally(() => {
      flushing = undefined;
    });
    await flushing;
  }

  function backgroundFlush(): void {
    if (flushing) return;
    flush().catch((err: unknown) => log.error({ err }, 'history flush failed; will retry'));
  }

  const timer = setInterval(backgroundFlush, opts.flushIntervalMs ?? 2000);
  timer.unref();

  const purgeEvery = opts.purgeIntervalMs ?? HOUR_MS;
  const purgeTimer =
    purgeEvery > 0
      ? setInterval(() => {
          service.purge().catch((err: unknown) => log.error({ err }, 'history purge failed'));
        }, purgeEvery)
      : undefined;
  purgeTimer?.unref();

  const reads = new HistoryReads(repo, (db, name) => states.get(seriesKey(db, name)), clock, complete);

  const service: HistoryService = Object.assign(reads, {
    append(dbname: DbName, name: string, rec: ResultRecord, fence?: Fence): void {
      if (closed) throw new Error('history service is closed');
      if (!isDbName(dbname)) throw new TypeError(`unknown dbname ${String(dbname)}`);
      const s = state(dbname, name);
      if (cluster && (fence || s.fence)) dropped(s, fenceAppend(s, fence, dirty.has(s) || inFlight.has(s)));
      applyRecord(s, rec, selfOrigin);
      dirty.add(s);
      if (++pendingRows >= maxPending) backgroundFlush();
    },
    latest: (dbname: DbName, name: string) => states.get(seriesKey(dbname, name))?.latest,
    latestAll(): LatestStatus[] {
      const out: LatestStatus[] = [];
      for (const s of states.values()) if (s.latest) out.push(s.latest);
      return out;
    },
    async recent(dbname: DbName, name: string, n: number): Promise<ResultRecord[]> {
      await complete(dbname, name, Infinity);
      return recent(repo, states.get(seriesKey(dbname, name)), n, origins);
    },
    series: () => [...states.values()].map((s) => ({ dbname: s.db, name: s.name })),
    inMemory() {
      let withRows = 0;
      let partial = 0;
      for (const s of states.values()) {
        if (s.chunks.some((c) => c.buf.count > 0)) withRows++;
        if (s.partial) partial++;
      }
      return { series: states.size, withRows, partial };
    },
    selfOrigin: opts.origin,
    origin: (id: number | undefined) => origins.get(id),
    async purge(): Promise<{ deleted: number }> {
      const now = clock();
      const rawBefore = hourStart(now - opts.retentionHours() * HOUR_MS);
      const rollupBefore = dayStart(now - (opts.rollupRetentionDays ?? DEFAULT_ROLLUP_RETENTION_DAYS) * DAY_MS);
      let deleted = 0;
      // In a cluster each series is purged by its holder only (not once per instance).
      for (const s of [...states.values()].filter(holds))
        deleted += await repo.purgeSeries(s.db, s.name, rawBefore, rollupBefore);
      log.info({ deleted, rawBefore, rollupBefore }, 'history purge done');
      return { deleted };
    },
    async deleteMonitor(dbname: DbName, name: string): Promise<void> {
      while (flushing) await flushing.catch(() => undefined);
      const s = states.get(seriesKey(dbname, name));
      if (s) dirty.delete(s);
      states.delete(seriesKey(dbname, name));
      // Rows of this series may still sit in WAL records: a tombstone makes a restart's replay skip them.
      if (cluster || (s && s.lastTs >= walLowHour))
        await wal.markGone(dbname, name, Math.max(clock(), s?.lastTs ?? -Infinity));
      await repo.deleteSeries(dbname, name);
    },
    flush,
    sync: async () => follower?.sync(),
    ownershipChanged(): void {
      rescan = true;
      void follower?.sync().catch(() => undefined);
      loadHeldSeries();
    },
    async openRows(dbname: DbName, name: string): Promise<RawRow[] | undefined> {
      if (opts.holds && !opts.holds(dbname, name)) return undefined;
      await complete(dbname, name, Infinity); // a series gained lately: its load from the WAL
      const from = hourStart(clock()) - HOUR_MS;
      const out: RawRow[] = [];
      for (const c of states.get(seriesKey(dbname, name))?.chunks ?? []) {
        if (c.hour >= from) for (const r of c.buf.rows()) out.push(r);
      }
      return out;
    },
    forget(name: string): void {
      if (!cluster) return;
      for (const db of DBNAMES) {
        const s = states.get(seriesKey(db, name));
        if (s) dirty.delete(s);
        states.delete(seriesKey(db, name));
      }
    },
    async close(): Promise<void> {
      follower?.stop();
      clearInterval(timer);
      if (purgeTimer) clearInterval(purgeTimer);
      await flush();
      closed = true;
    },
  });
  return service;
}

export type { Rollup };
export { decodeRollup };
