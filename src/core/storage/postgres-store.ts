/**
 * The PostgreSQL KvStore driver. One store = one namespace = two tables:
 *   kv_<ns>  (bucket text COLLATE "C", k bytea, v bytea, PRIMARY KEY (bucket, k))   the entries
 *   kvb_<ns> (name text COLLATE "C" PRIMARY KEY, created_at_ms bigint)              the bucket list
 * Keys are ordered-binary bytes, so bytea ordering (memcmp) is LMDB's key order; values are msgpack (msgpackr).
 * Range reads page through the primary-key index (keyset pagination), never loading a whole bucket.
 * Writes to watched buckets are announced to the other processes in their own transaction (postgres-feed.ts).
 */
import pg from 'pg';
import { pack, unpack } from 'msgpackr';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { DumpWriter, restoreDump } from './kv-dump.js';
import { createTables, tableNames, unavailable, type PgRow, type TableNames } from './postgres-schema.js';
import { PostgresAttemptCounters } from './postgres-counters.js';
import { PostgresClaims, fenceIn } from './postgres-claims.js';
import { normalizeFences, type BatchOptions } from './claims.js';
import { PostgresFeed, type ChangeNotice } from './postgres-feed.js';
import { assertBucketName, assertValue, checkLimit, decodeKey, encodeKey } from './key-codec.js';
import type { BatchOp, Bucket, BucketInfo, ChangeWatcher, KvEntry, KvKey, KvStore, RangeOptions } from './kv-store.js';

export interface PostgresStoreOptions {
  /** postgres://user@host:port/db */
  url: string;
  /** [a-z0-9_]{1,32}: names the store's tables (kv_<namespace>, kvb_<namespace>). */
  namespace: string;
  log?: Logger;
  /** Pool size (default 10). */
  poolMax?: number;
  /** Rows fetched per range page (default 1000). */
  pageSize?: number;
}

function encodeValue(value: unknown): Buffer {
  assertValue(value);
  return pack(value);
}

export class PostgresBucket implements Bucket {
  constructor(
    private readonly store: PostgresStore,
    readonly name: string,
  ) {}

  private async sql(text: string, values: unknown[]): Promise<pg.QueryResult<PgRow>> {
    try {
      await this.store.ensureBucket(this.name);
      return await this.store.pool.query(text.replaceAll('$T', this.store.tables.kv), values);
    } catch (err) {
      return unavailable(err);
    }
  }

  async get<V = unknown>(key: KvKey): Promise<V | undefined> {
    const res = await this.sql('SELECT v FROM $T WHERE bucket = $1 AND k = $2', [this.name, encodeKey(key)]);
    const row = res.rows[0];
    return row ? (unpack(row.v as Buffer) as V) : undefined;
  }

  async getMany<V = unknown>(keys: KvKey[]): Promise<Array<V | undefined>> {
    const encoded = keys.map((k) => encodeKey(k));
    if (encoded.length === 0) return [];
    const res = await this.sql('SELECT k, v FROM $T WHERE bucket = $1 AND k = ANY($2::bytea[])', [this.name, encoded]);
    const found = new Map<string, V>();
    for (const row of res.rows) found.set((row.k as Buffer).toString('hex'), unpack(row.v as Buffer) as V);
    return encoded.map((k) => found.get(k.toString('hex')));
  }

  /** A write: announced with `key` (undefined: the whole bucket) in its transaction when the bucket is watched. */
  private async write(text: string, values: unknown[], key: Buffer | undefined): Promise<pg.QueryResult<PgRow>> {
    const notices = this.store.feed.notices([{ bucket: this.name, key }]);
    if (notices.length === 0) return this.sql(text, values);
    await this.store.ensureBucket(this.name).catch(unavailable);
    return this.store.announced(notices, (c) => c.query(text.replaceAll('$T', this.store.tables.kv), values));
  }

  async put(key: KvKey, value: unknown): Promise<void> {
    const k = encodeKey(key);
    await this.write(
      'INSERT INTO $T (bucket, k, v) VALUES ($1, $2, $3) ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v',
      [this.name, k, encodeValue(value)],
      k,
    );
  }

  async delete(key: KvKey): Promise<boolean> {
    const k = encodeKey(key);
    const res = await this.write('DELETE FROM $T WHERE bucket = $1 AND k = $2', [this.name, k], k);
    return (res.rowCount ?? 0) > 0;
  }

  async *range<V = unknown>(opts: RangeOptions = {}): AsyncIterable<KvEntry<V>> {
    checkLimit(opts.limit);
    const reverse = opts.reverse ?? false;
    // forward: start <= k < end; reverse: end < k <= start (start is the HIGH bound)
    const start = opts.start === undefined ? undefined : encodeKey(opts.start);
    const end = opts.end === undefined ? undefined : encodeKey(opts.end);
    let remaining = opts.limit ?? Infinity;
    let after: Buffer | undefined;
    while (remaining > 0) {
      const values: unknown[] = [this.name];
      const where = ['bucket = $1'];
      const cond = (op: string, v: Buffer): void => {
        values.push(v);
        where.push(`k ${op} $${values.length}`);
      };
      if (after) cond(reverse ? '<' : '>', after);
      else if (start) cond(reverse ? '<=' : '>=', start);
      if (end) cond(reverse ? '>' : '<', end);
      const pageSize = Math.min(this.store.pageSize, remaining);
      const res = await this.sql(
        `SELECT k, v FROM $T WHERE ${where.join(' AND ')} ORDER BY k ${reverse ? 'DESC' : 'ASC'} LIMIT ${pageSize}`,
        values,
      );
      for (const row of res.rows) yield { key: decodeKey(row.k as Buffer), value: unpack(row.v as Buffer) as V };
      remaining -= res.rows.length;
      if (res.rows.length < pageSize) return;
      after = res.rows[res.rows.length - 1]!.k as Buffer;
    }
  }

  async deleteRange(opts: { start?: KvKey; end?: KvKey }): Promise<number> {
    const values: unknown[] = [this.name];
    const where = ['bucket = $1'];
    if (opts.start !== undefined) where.push(`k >= $${values.push(encodeKey(opts.start))}`);
    if (opts.end !== undefined) where.push(`k < $${values.push(encodeKey(opts.end))}`);
    const res = await this.write(`DELETE FROM $T WHERE ${where.join(' AND ')}`, values, undefined);
    return res.rowCount ?? 0;
  }

  async count(): Promise<number> {
    const res = await this.sql('SELECT count(*)::int AS n FROM $T WHERE bucket = $1', [this.name]);
    return res.rows[0]!.n as number;
  }

  async clear(): Promise<void> {
    await this.write('DELETE FROM $T WHERE bucket = $1', [this.name], undefined);
  }
}

async function notify(c: pg.PoolClient, notices: ChangeNotice[]): Promise<void> {
  if (notices.length === 0) return;
  await c.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
    notices[0]!.channel,
    notices.map((n) => n.payload),
  ]);
}

/** Splits ops into runs of one type, deduplicating puts/deletes of one key in a run (the last op wins). */
function runsOf(ops: Array<{ type: 'put' | 'delete'; bucket: string; key: Buffer; value?: Buffer }>) {
  const runs: Array<{ type: 'put' | 'delete'; rows: Map<string, { bucket: string; key: Buffer; value?: Buffer }> }> =
    [];
  for (const op of ops) {
    let run = runs[runs.length - 1];
    if (!run || run.type !== op.type || run.rows.size >= 1000) runs.push((run = { type: op.type, rows: new Map() }));
    const id = `${op.bucket}\u0000${op.key.toString('hex')}`;
    run.rows.delete(id);
    run.rows.set(id, op);
  }
  return runs;
}

export class PostgresStore implements KvStore {
  readonly driver = 'postgres';
  private readonly known = new Map<string, Promise<void>>();
  /** Buckets this process has seen registered in the bucket table (a batch to them skips the registration). */
  private readonly registered = new Set<string>();
  readonly attempts: PostgresAttemptCounters;
  readonly claims: PostgresClaims;

  constructor(
    readonly pool: pg.Pool,
    readonly namespace: string,
    readonly tables: TableNames,
    readonly pageSize: number,
    readonly feed: PostgresFeed,
    private readonly log?: Logger,
  ) {
    this.attempts = new PostgresAttemptCounters(tables.attempts, (fn) => this.inTransaction(fn));
    this.claims = new PostgresClaims(tables.claims, (text, values) =>
      pool.query<PgRow>(text, values).catch(unavailable),
    );
  }

  watch(bucket: string, watcher: ChangeWatcher): () => void {
    assertBucketName(bucket);
    return this.feed.watch(bucket, watcher);
  }

  /** Runs `write` and sends the notices in one transaction: they are delivered at commit, and only then. */
  async announced<T>(notices: ChangeNotice[], write: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.inTransaction(async (c) => {
      const out = await write(c);
      await notify(c, notices);
      return out;
    });
  }

  /** Registers a bucket in the bucket table once per process (idempotent across processes). */
  ensureBucket(name: string): Promise<void> {
    let p = this.known.get(name);
    if (!p) {
      p = this.pool
        .query(`INSERT INTO ${this.tables.buckets} (name, created_at_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
          name,
          Date.now(),
        ])
        .then(() => void this.registered.add(name));
      p.catch((err: unknown) => {
        this.known.delete(name);
        this.log?.warn({ err, bucket: name }, 'registering bucket failed');
      });
      this.known.set(name, p);
    }
    return p;
  }

  bucket(name: string): PostgresBucket {
    assertBucketName(name);
    void this.ensureBucket(name).catch(() => undefined);
    return new PostgresBucket(this, name);
  }

  async buckets(): Promise<BucketInfo[]> {
    await Promise.allSettled(this.known.values());
    const { kv, buckets } = this.tables;
    const res = await this.pool
      .query<{ name: string; keys: number; bytes: string }>(
        `SELECT b.name, count(e.k)::int AS keys, coalesce(sum(octet_length(e.k) + octet_length(e.v)), 0)::bigint AS bytes
         FROM ${buckets} b LEFT JOIN ${kv} e ON e.bucket = b.name GROUP BY b.name ORDER BY b.name`,
      )
      .catch(unavailable);
    return res.rows.map((r) => ({ name: r.name, keys: r.keys, bytes: Number(r.bytes) }));
  }

  async batch(ops: BatchOp[], opts: BatchOptions = {}): Promise<void> {
    const fences = normalizeFences(opts.fences);
    const prepared = ops.map((op) => {
      if (op.type !== 'put' && op.type !== 'delete') throw AppError.badRequest('invalid batch op type', 'type');
      assertBucketName(op.bucket);
      const key = encodeKey(op.key);
      return op.type === 'put'
        ? { type: op.type, bucket: op.bucket, key, value: encodeValue(op.value) }
        : { type: op.type, bucket: op.bucket, key };
    });
    if (prepared.length === 0 && fences.length === 0) return;
    // A history flush every 2 s writes to known buckets: one statement fewer per batch than registering them again.
    const names = [...new Set(prepared.map((p) => p.bucket))].filter((n) => !this.registered.has(n));
    await this.inTransaction(async (c) => {
      await fenceIn(c, this.tables.fences, fences);
      if (prepared.length === 0) return;
      if (names.length > 0) {
        await c.query(
          `INSERT INTO ${this.tables.buckets} (name, created_at_ms) SELECT unnest($1::text[]), $2 ON CONFLICT DO NOTHING`,
          [names, Date.now()],
        );
      }
      for (const run of runsOf(prepared)) {
        const rows = [...run.rows.values()];
        const args = [rows.map((r) => r.bucket), rows.map((r) => r.key)];
        if (run.type === 'put') {
          await c.query(
            `INSERT INTO ${this.tables.kv} (bucket, k, v) SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])
               ON CONFLICT (bucket, k) DO UPDATE SET v = EXCLUDED.v`,
            [...args, rows.map((r) => r.value)],
          );
        } else {
          await c.query(
            `DELETE FROM ${this.tables.kv} WHERE (bucket, k) IN (SELECT * FROM unnest($1::text[], $2::bytea[]))`,
            args,
          );
        }
      }
      await notify(c, this.feed.notices(prepared));
    });
    for (const n of names) this.registered.add(n);
  }

  private async inTransaction<T>(fn: (c: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    const c = await this.pool.connect().catch(unavailable);
    try {
      await c.query(begin);
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  /** A consistent dump (one REPEATABLE READ snapshot) of the namespace in the kv-dump format (see kv-dump.ts). */
  async backup(destPath: string): Promise<number> {
    await Promise.allSettled(this.known.values());
    return this.inTransaction(async (c) => {
      const { kv, buckets } = this.tables;
      const names = (await c.query<PgRow>(`SELECT name FROM ${buckets} ORDER BY name`)).rows.map(
        (r) => r.name as string,
      );
      const writer = await DumpWriter.create(destPath, {
        format: 'sentinel-kv-dump',
        version: 1,
        driver: this.driver,
        namespace: this.namespace,
        createdAtMs: Date.now(),
        buckets: names,
      });
      try {
        let last: [string, Buffer] | undefined;
        for (;;) {
          const res = last
            ? await c.query<PgRow>(
                `SELECT bucket, k, v FROM ${kv} WHERE (bucket, k) > ($1, $2) ORDER BY bucket, k LIMIT 1000`,
                last,
              )
            : await c.query<PgRow>(`SELECT bucket, k, v FROM ${kv} ORDER BY bucket, k LIMIT 1000`);
          for (const r of res.rows) await writer.entry(r.bucket as string, r.k as Buffer, r.v as Buffer);
          if (res.rows.length < 1000) break;
          const tail = res.rows[res.rows.length - 1]!;
          last = [tail.bucket as string, tail.k as Buffer];
        }
      } catch (err) {
        writer.abort();
        throw err;
      }
      const bytes = await writer.finish();
      this.log?.info({ destPath, bytes }, 'postgres backup written');
      return bytes;
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async dropBuckets(names: string[]): Promise<void> {
    names.forEach((n) => assertBucketName(n));
    await Promise.allSettled(names.map((n) => this.known.get(n)).filter((p) => p !== undefined));
    await this.inTransaction(async (c) => {
      await c.query(`DELETE FROM ${this.tables.kv} WHERE bucket = ANY($1::text[])`, [names]);
      await c.query(`DELETE FROM ${this.tables.buckets} WHERE name = ANY($1::text[])`, [names]);
      await notify(c, this.feed.notices(names.map((bucket) => ({ bucket }))));
    });
    for (const n of names) {
      this.known.delete(n);
      this.registered.delete(n);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.known.values());
    await this.feed.close();
    await this.pool.end();
  }
}

export async function openPostgresStore(opts: PostgresStoreOptions): Promise<PostgresStore> {
  const tables = tableNames(opts.namespace);
  const pool = new pg.Pool({ connectionString: opts.url, max: opts.poolMax ?? 10 });
  pool.on('error', (err) => opts.log?.warn({ err }, 'idle postgres client error'));
  const feed = new PostgresFeed(opts.url, opts.namespace, opts.log);
  try {
    await createTables(pool, opts.namespace);
    await feed.start();
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw new AppError('UNAVAILABLE', 'cannot open the postgres store', { cause: err });
  }
  opts.log?.info({ namespace: opts.namespace }, 'postgres store opened');
  return new PostgresStore(pool, opts.namespace, tables, opts.pageSize ?? 1000, feed, opts.log);
}

/** Loads a file written by `PostgresStore.backup` into any store (a fresh namespace, or an LMDB directory). */
export async function restorePostgresBackup(backupFile: string, target: KvStore): Promise<number> {
  return (await restoreDump(backupFile, target)).entries;
}

export { dropPostgresNamespace, NAMESPACE_RE } from './postgres-schema.js';
