/**
 * The embedded KvStore driver: one LMDB environment per store directory (`<path>/data.mdb` + `lock.mdb`), each bucket
 * a named sub-database with ordered-binary keys and msgpack values. LMDB itself lists the named databases in its main
 * database, so the bucket list survives restarts with no registry of our own (nothing else is written to the main DB).
 */
import { chmod, copyFile, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { open, ABORT, type Database, type RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { AppError, isAppError } from '../errors.js';
import { assertBucketName, assertValue, checkLimit, normalizeKey } from './key-codec.js';
import { MemoryAttemptCounters } from './attempt-counters.js';
import { type BatchOptions, MemoryClaims, MemoryFences, normalizeFences } from './claims.js';
import type { BatchOp, Bucket, BucketInfo, ChangeWatcher, KvEntry, KvKey, KvStore, RangeOptions } from './kv-store.js';

export interface LmdbStoreOptions {
  /** The store directory (created when missing). One environment per directory. */
  path: string;
  log?: Logger;
  /** Most buckets the environment can hold (default 256). */
  maxDbs?: number;
  /** Skip fsync on commit (tests/benchmarks only; default false = durable). */
  noSync?: boolean;
  /**
   * lmdb's overlappingSync: fsync after releasing the write lock (faster), but write promises then resolve when the
   * commit is visible, before it is flushed (safe against a process crash, not against power loss). Default false:
   * a write's promise resolves only once it is on disk, as the KvStore contract says.
   */
  overlappingSync?: boolean;
}

type Db = Database<unknown, KvKey>;
interface LmdbStats {
  entryCount: number;
  pageSize: number;
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
}

const DELETE_CHUNK = 10_000;

/** Maps lmdb's own validation errors (oversized/zero-length keys) to AppError VALIDATION; rethrows anything else. */
function mapError(err: unknown): never {
  if (isAppError(err)) throw err;
  const message = err instanceof Error ? err.message : String(err);
  if (/key size|zero length key|invalid key/i.test(message)) {
    throw AppError.badRequest('invalid key: too long or empty', 'key');
  }
  throw err;
}

export class LmdbBucket implements Bucket {
  constructor(
    private readonly store: LmdbStore,
    readonly name: string,
  ) {}

  private get db(): Db {
    return this.store.db(this.name);
  }

  /** Synchronous read for hot paths (LMDB reads are memory-mapped; no I/O wait in the common case). */
  getSync<V = unknown>(key: KvKey): V | undefined {
    try {
      return this.db.get(normalizeKey(key)) as V | undefined;
    } catch (err) {
      return mapError(err);
    }
  }

  async get<V = unknown>(key: KvKey): Promise<V | undefined> {
    return this.getSync<V>(key);
  }

  async getMany<V = unknown>(keys: KvKey[]): Promise<Array<V | undefined>> {
    const normalized = keys.map((k) => normalizeKey(k));
    try {
      return (await this.db.getMany(normalized)) as Array<V | undefined>;
    } catch (err) {
      return mapError(err);
    }
  }

  async put(key: KvKey, value: unknown): Promise<void> {
    const k = normalizeKey(key);
    assertValue(value);
    try {
      await this.db.put(k, value);
    } catch (err) {
      mapError(err);
    }
  }

  async delete(key: KvKey): Promise<boolean> {
    const k = normalizeKey(key);
    const db = this.db;
    try {
      // lmdb's async remove() resolves true even for a missing key; removeSync inside a transaction tells the truth.
      return await this.store.env.transaction(() => db.removeSync(k));
    } catch (err) {
      return mapError(err);
    }
  }

  async *range<V = unknown>(opts: RangeOptions = {}): AsyncIterable<KvEntry<V>> {
    checkLimit(opts.limit);
    if (opts.limit === 0) return;
    const db = this.db;
    const iterable = db.getRange({
      start: opts.start === undefined ? undefined : normalizeKey(opts.start),
      end: opts.end === undefined ? undefined : normalizeKey(opts.end),
      reverse: opts.reverse ?? false,
      limit: opts.limit,
    });
    for (const { key, value } of iterable) {
      yield { key, value: value as V };
    }
  }

  async deleteRange(opts: { start?: KvKey; end?: KvKey }): Promise<number> {
    const start = opts.start === undefined ? undefined : normalizeKey(opts.start);
    const end = opts.end === undefined ? undefined : normalizeKey(opts.end);
    const db = this.db;
    let total = 0;
    // Chunked transactions keep each write transaction (and the event loop) bounded on huge ranges.
    for (;;) {
      const removed = await this.store.env.transaction(() => {
        let n = 0;
        for (const k of Array.from(db.getKeys({ start, end, limit: DELETE_CHUNK }))) {
          if (db.removeSync(k)) n++;
        }
        return n;
      });
      total += removed;
      if (removed < DELETE_CHUNK) return total;
    }
  }

  async count(): Promise<number> {
    return (this.db.getStats() as LmdbStats).entryCount;
  }

  async clear(): Promise<void> {
    await this.db.clearAsync();
  }
}

export class LmdbStore implements KvStore {
  readonly driver = 'lmdb';
  readonly attempts = new MemoryAttemptCounters();
  readonly claims = new MemoryClaims();
  private readonly fences = new MemoryFences();
  private readonly dbs = new Map<string, Db>();

  constructor(
    /** The lmdb root database (environment). Exposed for the driver's own helpers; don't write to it. */
    readonly env: RootDatabase,
    readonly path: string,
    private readonly log?: Logger,
  ) {}

  /** The named sub-database of a bucket, opened (and created) on first use. */
  db(name: string): Db {
    let db = this.dbs.get(name);
    if (!db) {
      assertBucketName(name);
      db = this.env.openDB<unknown, KvKey>({ name, keyEncoding: 'ordered-binary', encoding: 'msgpack' });
      this.dbs.set(name, db);
    }
    return db;
  }

  /** One process owns an LMDB environment, and its own writes are never reported: nothing to follow. */
  watch(bucket: string, _watcher: ChangeWatcher): () => void {
    assertBucketName(bucket);
    return () => undefined;
  }

  bucket(name: string): LmdbBucket {
    this.db(name);
    return new LmdbBucket(this, name);
  }

  private existingNames(): string[] {
    const names: string[] = [];
    for (const key of this.env.getKeys()) {
      if (typeof key === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(key)) names.push(key);
    }
    return names;
  }

  async buckets(): Promise<BucketInfo[]> {
    return this.existingNames().map((name) => {
      const s = this.db(name).getStats() as LmdbStats;
      const pages = s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
      return { name, keys: s.entryCount, bytes: pages * s.pageSize };
    });
  }

  async batch(ops: BatchOp[], opts: BatchOptions = {}): Promise<void> {
    const fences = normalizeFences(opts.fences);
    // Validate everything first: a bad op must leave nothing behind.
    const prepared = ops.map((op) => {
      if (op.type !== 'put' && op.type !== 'delete') throw AppError.badRequest('invalid batch op type', 'type');
      assertBucketName(op.bucket);
      if (op.type === 'put') assertValue(op.value);
      return { op, key: normalizeKey(op.key) };
    });
    if (fences.length) this.fences.check(fences);
    if (prepared.length === 0) return;
    const dbs = prepared.map(({ op }) => this.db(op.bucket));
    let failure: unknown;
    // An async lmdb transaction commits even when its callback throws; a child transaction returning ABORT rolls back.
    await this.env.transaction(() =>
      this.env.childTransaction(() => {
        try {
          prepared.forEach(({ op, key }, i) => {
            if (op.type === 'put') dbs[i]!.putSync(key, op.value);
            else dbs[i]!.removeSync(key);
          });
          return undefined;
        } catch (err) {
          failure = err;
          return ABORT;
        }
      }),
    );
    if (failure !== undefined) mapError(failure);
  }

  async backup(destPath: string): Promise<number> {
    const parent = dirname(destPath);
    await mkdir(parent, { recursive: true, mode: 0o700 });
    // mdb_env_copy2 writes <dir>/data.mdb for a directory environment: copy into a scratch dir, then move the file.
    const scratch = await mkdtemp(join(parent, '.lmdb-backup-'));
    try {
      await this.env.backup(scratch, false);
      await chmod(join(scratch, 'data.mdb'), 0o600);
      await rename(join(scratch, 'data.mdb'), destPath);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    const { size } = await stat(destPath);
    this.log?.info({ destPath, bytes: size }, 'lmdb backup written');
    return size;
  }

  async dropBuckets(names: string[]): Promise<void> {
    names.forEach((n) => assertBucketName(n));
    const existing = new Set(this.existingNames());
    for (const name of names) {
      if (!existing.has(name)) continue;
      const db = this.db(name);
      this.dbs.delete(name);
      await db.drop();
    }
  }

  async close(): Promise<void> {
    this.dbs.clear();
    await this.env.close();
  }
}

export async function openLmdbStore(opts: LmdbStoreOptions): Promise<LmdbStore> {
  await mkdir(opts.path, { recursive: true, mode: 0o700 });
  const env = open({
    path: opts.path,
    // data.mdb and lock.mdb private to the service account (lmdb's own default is 0664); not in lmdb's typings.
    ...({ permissionsMode: 0o600 } as object),
    noSubdir: false,
    maxDbs: opts.maxDbs ?? 256,
    noSync: opts.noSync ?? false,
    overlappingSync: opts.overlappingSync ?? false,
  });
  opts.log?.info({ path: opts.path }, 'lmdb store opened');
  return new LmdbStore(env, opts.path, opts.log);
}

/**
 * Restores a file written by `LmdbStore.backup` as a new store directory: the backup is LMDB's data file, so it
 * becomes `<destDir>/data.mdb`. Refuses to overwrite an existing store. Open the result with `openLmdbStore`.
 */
export async function restoreLmdbBackup(backupFile: string, destDir: string): Promise<void> {
  await mkdir(destDir, { recursive: true, mode: 0o700 });
  await copyFile(backupFile, join(destDir, 'data.mdb'), 1 /* COPYFILE_EXCL */).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EEXIST') throw AppError.conflict(`a store already exists in ${destDir}`);
    throw err;
  });
  await chmod(join(destDir, 'data.mdb'), 0o600);
}
