/**
 * Automatic thresholds shared by a cluster (docs/reporting.md "Automatic thresholds", decision 179): the member that
 * holds a shard computes the thresholds of that shard's monitors from every row of their history (it has them) and
 * stores them in one record per (probe group, shard) of bucket `auto_thresholds`; every member reads all records, so
 * each instance shows the same thresholds for a monitor and a member that wins a shard has them at once. Before this,
 * every member read days of rollups of every monitor each hour (N × the store reads) and a member not running a
 * monitor computed its thresholds without the open hours' rows it does not follow.
 *
 * Record (format 1): key [group, shard], value `{v: 1, atMs, member, rows: [[dbname, name, threshMin, threshMaj,
 * threshCri, samples, medianMs, madMs], ...]}`; a record of another version is skipped (logged), never misread. The
 * bucket is watched: a member's write reaches the others through the store's change feed and they read the bucket
 * again (256 records at most per probe group; one read at a time, and one more when writes came during it).
 * A held shard with no thresholds (its monitors deleted or too new) has its record deleted, not kept: once this member
 * has read the bucket, only a record it saw there is deleted, so an empty shard costs no write each hour.
 */
import type { Logger } from 'pino';
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';
import { shardKey } from '../cluster/shards.js';
import type { DbName } from '../history/types.js';
import type { AutoThreshold } from './auto-threshold.js';

export const AUTO_THRESHOLD_BUCKET = 'auto_thresholds';
export const AUTO_THRESHOLD_FORMAT = 1;

/** A monitor's place in the cluster: its probe group and shard (cluster/shards.ts). */
export interface ShardRef {
  group: string;
  shard: number;
}

type Row = [DbName, string, number, number, number, number, number, number];

interface ShardRecord {
  v: number;
  atMs: number;
  member: string;
  rows: Row[];
}

/** The thresholds computed here for one held shard (possibly none: the shard's stored record is then deleted). */
export interface ShardThresholds extends ShardRef {
  entries: Array<{ dbname: DbName; name: string; t: AutoThreshold }>;
}

export const thresholdKey = (dbname: string, name: string): string => `${dbname}\u0000${name}`;

function isRecord(v: unknown): v is ShardRecord {
  const r = v as ShardRecord | undefined;
  return !!r && r.v === AUTO_THRESHOLD_FORMAT && typeof r.atMs === 'number' && Array.isArray(r.rows);
}

function isRow(r: unknown): r is Row {
  if (!Array.isArray(r) || r.length !== 8 || typeof r[0] !== 'string' || typeof r[1] !== 'string') return false;
  for (let i = 2; i < 8; i++) if (typeof r[i] !== 'number' || !Number.isFinite(r[i])) return false;
  return true;
}

export class ThresholdShare {
  private readonly bucket;
  private reading: Promise<void> | undefined;
  private again = false;
  /** Reads started, and the latest of them applied (refresh). */
  private started = 0;
  private applied = 0;
  private unwatch: (() => void) | undefined;
  private following: ((all: Map<string, AutoThreshold>) => void) | undefined;
  /** The records (shardKey) the last completed read found; undefined until one completed. */
  private stored: Set<string> | undefined;

  constructor(
    private readonly store: KvStore,
    private readonly member: string,
    private readonly log: Logger,
  ) {
    this.bucket = store.bucket(AUTO_THRESHOLD_BUCKET);
    // Watched from the start: a PostgreSQL store announces the writes to the buckets its process watches, so even a
    // record published before follow() reaches the other members.
    this.unwatch = store.watch(AUTO_THRESHOLD_BUCKET, () => this.changed());
  }

  /** Writes the records of the shards computed here and deletes those of held shards left empty, in one batch. */
  async publish(shards: Iterable<ShardThresholds>, atMs: number): Promise<number> {
    const ops: BatchOp[] = [];
    for (const s of shards) {
      if (s.entries.length === 0) {
        if (this.stored?.has(shardKey(s.group, s.shard)) !== false) {
          ops.push({ type: 'delete', bucket: AUTO_THRESHOLD_BUCKET, key: [s.group, s.shard] });
        }
        continue;
      }
      const rows: Row[] = s.entries.map(({ dbname, name, t }) => [
        dbname,
        name,
        t.threshMin,
        t.threshMaj,
        t.threshCri,
        t.samples,
        t.medianMs,
        t.madMs,
      ]);
      const value: ShardRecord = { v: AUTO_THRESHOLD_FORMAT, atMs, member: this.member, rows };
      ops.push({ type: 'put', bucket: AUTO_THRESHOLD_BUCKET, key: [s.group, s.shard], value });
    }
    if (ops.length) await this.store.batch(ops);
    return ops.length;
  }

  /** Every member's thresholds as stored now, by thresholdKey(dbname, name). */
  async read(): Promise<Map<string, AutoThreshold>> {
    const out = new Map<string, AutoThreshold>();
    const stored = new Set<string>();
    for await (const { key, value } of this.bucket.range()) {
      if (Array.isArray(key)) stored.add(shardKey(String(key[0]), Number(key[1])));
      if (!isRecord(value)) {
        this.log.warn({ key, v: (value as { v?: unknown } | undefined)?.v }, 'auto thresholds: record skipped');
        continue;
      }
      let bad = 0;
      for (const row of value.rows) {
        if (!isRow(row)) {
          bad++;
          continue;
        }
        const [dbname, name, threshMin, threshMaj, threshCri, samples, medianMs, madMs] = row;
        out.set(thresholdKey(dbname, name), {
          threshMin,
          threshMaj,
          threshCri,
          computedAtMs: value.atMs,
          samples,
          medianMs,
          madMs,
        });
      }
      if (bad) this.log.warn({ key, rows: bad }, 'auto thresholds: malformed rows skipped');
    }
    this.stored = stored;
    return out;
  }

  /**
   * Reads the bucket and calls `apply` with it, unless a read that started later was applied first: reads overlap
   * (a recompute's and the change feed's), and one that started earlier may hold an older snapshot.
   */
  async refresh(apply: (all: Map<string, AutoThreshold>) => void): Promise<void> {
    const seq = ++this.started;
    const all = await this.read();
    if (seq < this.applied) return;
    this.applied = seq;
    apply(all);
  }

  /**
   * Refreshes whenever another member writes the bucket (the store's change feed); those reads run one at a time and
   * a write seen during one causes one more.
   */
  follow(apply: (all: Map<string, AutoThreshold>) => void): void {
    this.following = apply;
  }

  private changed(): void {
    const apply = this.following;
    if (!apply) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    const loop = async (): Promise<void> => {
      do {
        this.again = false;
        await this.refresh(apply).catch((err: unknown) => this.log.warn({ err }, 'auto thresholds: read failed'));
      } while (this.again);
    };
    this.reading = loop().finally(() => (this.reading = undefined));
  }

  /** Stops following; resolves after a read in progress. */
  async stop(): Promise<void> {
    this.unwatch?.();
    this.unwatch = undefined;
    await this.reading;
  }
}
