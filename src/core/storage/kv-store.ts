/**
 * The narrow storage contract both services use. A store holds named buckets; a bucket maps ordered keys to values.
 *
 * Keys are `KvKey`: a string, a number, or an array of strings/numbers (a composite key such as
 * `[monitorName, timestampMs]`). Keys sort as `ordered-binary` encodes them (the same order LMDB uses natively):
 * numbers before strings, numbers numerically, strings by UTF-8 bytes, arrays element by element. Every driver must
 * produce the same order; the contract suite (kv-store.contract.ts) proves it.
 *
 * Values are anything msgpack can carry: JSON-like objects, numbers, strings, booleans, null, Uint8Array/Buffer.
 *
 * Writes are durable when the returned promise resolves. `batch` is atomic: all operations land or none.
 * Domain queries (users, settings, series) live in repos above this interface, never in a driver.
 */
import type { AttemptCounters } from './attempt-counters.js';
import type { BatchOptions, Claims } from './claims.js';

export type KvKeyPart = string | number;
export type KvKey = KvKeyPart | KvKeyPart[];

export interface RangeOptions {
  /** Inclusive lower bound. */
  start?: KvKey;
  /** Exclusive upper bound. */
  end?: KvKey;
  /** Iterate from the highest key down (start is then the inclusive upper bound... see note below). */
  reverse?: boolean;
  limit?: number;
}
// Note on reverse: like LMDB, with reverse=true `start` is the inclusive HIGH bound and `end` the exclusive LOW bound.

export interface KvEntry<V = unknown> {
  key: KvKey;
  value: V;
}

export type BatchOp =
  | { type: 'put'; bucket: string; key: KvKey; value: unknown }
  | { type: 'delete'; bucket: string; key: KvKey };

export interface BucketInfo {
  name: string;
  keys: number;
  /** Approximate bytes used, when the driver knows it. */
  bytes?: number;
}

export interface Bucket {
  readonly name: string;
  get<V = unknown>(key: KvKey): Promise<V | undefined>;
  getMany<V = unknown>(keys: KvKey[]): Promise<Array<V | undefined>>;
  put(key: KvKey, value: unknown): Promise<void>;
  /** Resolves true when a key was removed. */
  delete(key: KvKey): Promise<boolean>;
  range<V = unknown>(opts?: RangeOptions): AsyncIterable<KvEntry<V>>;
  /** Deletes every key in [start, end); resolves the number deleted. */
  deleteRange(opts: { start?: KvKey; end?: KvKey }): Promise<number>;
  count(): Promise<number>;
  clear(): Promise<void>;
}

/**
 * Called when another process sharing the store changed a bucket: `key` is the changed key, or undefined when any
 * key may have changed (a range delete, a dropped bucket, or a gap in the feed such as a reconnect): reload it all.
 * A watcher is called for one change at a time, in commit order; a returned promise is awaited before the next call.
 */
export type ChangeWatcher = (key: KvKey | undefined) => void | Promise<void>;

export interface KvStore {
  /** The driver's name ('lmdb', 'postgres'). */
  readonly driver: string;
  /** Attempt counters every process on the store shares (login throttling; attempt-counters.ts). */
  readonly attempts: AttemptCounters;
  /** Claims on keys every process on the store shares (alert deliveries in a cluster; claims.ts). */
  readonly claims: Claims;
  /**
   * Follows the changes OTHER processes commit to `bucket` (never this store object's own writes), so a cache of the
   * bucket stays current. Register before loading the cache: a change committed during the load is then reported.
   * A driver only one process can open reports nothing. A shared driver announces the writes to the buckets its own
   * process watches (every instance of a service runs the same code, so writers and watchers agree). Returns the
   * unsubscribe function.
   */
  watch(bucket: string, watcher: ChangeWatcher): () => void;
  /** Opens (creating when missing) a named bucket. Names: [A-Za-z0-9_.-]{1,64}. */
  bucket(name: string): Bucket;
  /** Every bucket that exists, with its key count. */
  buckets(): Promise<BucketInfo[]>;
  /**
   * Atomic multi-bucket write. With `fences` it is written only when no fence key's stored epoch is newer (then they
   * are stamped, even with no ops), else nothing is and it fails with a stale-fence CONFLICT (claims.ts).
   */
  batch(ops: BatchOp[], opts?: BatchOptions): Promise<void>;
  /**
   * Writes a consistent online copy of the whole store to `destPath` (a file path; the driver picks its format) while
   * writers continue. Resolves with the bytes written.
   */
  backup(destPath: string): Promise<number>;
  /** Drops the named buckets (their data is gone). */
  dropBuckets(names: string[]): Promise<void>;
  close(): Promise<void>;
}

export const BUCKET_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;
