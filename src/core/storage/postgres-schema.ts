/**
 * PostgreSQL schema of a KvStore namespace: table names, creation on open (safe when processes race), dropping,
 * and the mapping of connection failures to AppError UNAVAILABLE.
 */
import type { Pool } from 'pg';
import { AppError } from '../errors.js';

/** The driver, loaded by whoever first needs it (STORE_URL=postgres, the cluster tables), not at service start: a
 * service on the embedded store never loads it (≈ 16 MB resident: docs/benchmarks.md). */
/** A row as pg hands it over: columns read from it are asserted where they are used (bigint arrives as a string). */
export type PgRow = Record<string, unknown>;

export async function loadPg(): Promise<(typeof import('pg'))['default']> {
  return (await import('pg')).default;
}

export const NAMESPACE_RE = /^[a-z0-9_]{1,32}$/;

export interface TableNames {
  kv: string;
  buckets: string;
  attempts: string;
  claims: string;
  fences: string;
  /** The monitor service's cluster membership and shard leases (src/monitor/cluster/cluster-store.ts). */
  clusterMembers: string;
  clusterShards: string;
}

/** Every table of a namespace: the ones the store creates and the cluster's, so dropping a namespace drops all. */
export function tableNames(namespace: string): TableNames {
  if (!NAMESPACE_RE.test(namespace)) {
    throw AppError.badRequest(`invalid namespace: must match ${NAMESPACE_RE.source}`, 'namespace');
  }
  return {
    kv: `kv_${namespace}`,
    buckets: `kvb_${namespace}`,
    attempts: `kvl_${namespace}`,
    claims: `kvq_${namespace}`,
    fences: `kvf_${namespace}`,
    clusterMembers: `cluster_members_${namespace}`,
    clusterShards: `cluster_shards_${namespace}`,
  };
}

/** Connection-level failures (refused, reset, server shutting down: SQLSTATE class 08/57P) become UNAVAILABLE. */
export function unavailable(err: unknown): never {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (/^(08|57P)/.test(code) || /^E(CONN|PIPE|TIMEDOUT|HOSTUNREACH)/.test(code))) {
    throw new AppError('UNAVAILABLE', 'the postgres store is unavailable', { cause: err, retryAfterS: 5 });
  }
  if (err instanceof Error && /Connection terminated|pool after calling end/i.test(err.message)) {
    throw new AppError('UNAVAILABLE', 'the postgres store is unavailable', { cause: err, retryAfterS: 5 });
  }
  throw err;
}

export async function createTables(pool: Pool, namespace: string): Promise<void> {
  const { kv, buckets, attempts, claims, fences } = tableNames(namespace);
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    // Serializes concurrent first opens: CREATE TABLE IF NOT EXISTS alone can race on the catalog.
    await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sentinel-kv:${namespace}`]);
    await c.query(`CREATE TABLE IF NOT EXISTS ${kv} (bucket text COLLATE "C" NOT NULL, k bytea NOT NULL,
      v bytea NOT NULL, PRIMARY KEY (bucket, k))`);
    await c.query(`CREATE TABLE IF NOT EXISTS ${buckets} (name text COLLATE "C" PRIMARY KEY,
      created_at_ms bigint NOT NULL)`);
    // Attempt counters (postgres-counters.ts): short-lived, never backed up (a restore starts every count afresh).
    await c.query(`CREATE TABLE IF NOT EXISTS ${attempts} (k text COLLATE "C" PRIMARY KEY, n int NOT NULL,
      window_end_ms bigint NOT NULL, blocked_until_ms bigint NOT NULL)`);
    // Claims and fences (postgres-claims.ts): not backed up either.
    await c.query(`CREATE TABLE IF NOT EXISTS ${claims} (k text COLLATE "C" PRIMARY KEY, owner text NOT NULL,
      expires_ms bigint NOT NULL)`);
    await c.query(`CREATE TABLE IF NOT EXISTS ${fences} (k text COLLATE "C" PRIMARY KEY, epoch bigint NOT NULL)`);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

/** Drops a namespace's tables (all its data, the cluster's membership and leases included). For tests, restores
 * over a namespace and decommissioning. */
export async function dropPostgresNamespace(url: string, namespace: string): Promise<void> {
  const tables = Object.values(tableNames(namespace));
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP TABLE IF EXISTS ${tables.join(', ')}`);
  } finally {
    await client.end();
  }
}
