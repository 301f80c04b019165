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
 */
import type { Logger } from 'pino';
import type { KvKey, KvStore } from '../../core/storage/kv-store.js';
import { BUCKET, type Extra } from './series.repo.js';
import { replayRow, type SeriesState } from './series-state.js';
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
}

export class HistoryFollower {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  /** Per series: the message/details of its newest flagged row read (an unflagged row repeats them). */
  private readonly extraOf = new WeakMap<SeriesState, Extra>();
  private stopped = false;

  constructor(private readonly d: FollowDeps) {}

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
    for (let i = 0; i < rows.length; i++) {
      const s = states[i]!;
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
