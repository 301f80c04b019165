/**
 * The PostgreSQL store's claims and fences (claims.ts): tables kvq_<ns> (k text PRIMARY KEY, owner text,
 * expires_ms bigint) and kvf_<ns> (k text PRIMARY KEY, epoch bigint). A claim is one upsert whose update applies only
 * to an expired row or the caller's own (`INSERT … ON CONFLICT (k) DO UPDATE … WHERE expired OR mine RETURNING k`):
 * atomic per key, so two processes never both hold one, with no lock held past the statement. Fences are stamped in
 * the batch's own transaction (fenceIn), in key order. Neither table is backed up: a restore starts with no claim and
 * no fence (the cluster's leases, in their own tables, are not backed up either).
 */
import type pg from 'pg';
import type { PgRow } from './postgres-schema.js';
import { type Claims, type Fence, staleFence } from './claims.js';

const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

export class PostgresClaims implements Claims {
  private calls = 0;

  constructor(
    private readonly table: string,
    private readonly query: (text: string, values: unknown[]) => Promise<pg.QueryResult<PgRow>>,
  ) {}

  async claim(keys: string[], owner: string, ttlMs: number): Promise<string[]> {
    const unique = [...new Set(keys)].sort();
    if (unique.length === 0) return [];
    const res = await this.query(
      `INSERT INTO ${this.table} AS t (k, owner, expires_ms) SELECT unnest($1::text[]), $2, ${NOW_MS} + $3
       ON CONFLICT (k) DO UPDATE SET owner = EXCLUDED.owner, expires_ms = EXCLUDED.expires_ms
       WHERE t.owner = EXCLUDED.owner OR t.expires_ms < ${NOW_MS} RETURNING k`,
      [unique, owner, Math.round(ttlMs)],
    );
    // Claims of owners that died and nobody needed since: swept now and then (an hour past expiry).
    if (++this.calls % 1000 === 0)
      await this.query(`DELETE FROM ${this.table} WHERE expires_ms < ${NOW_MS} - 3600000`, []);
    return res.rows.map((r) => r.k as string);
  }

  async release(keys: string[], owner: string): Promise<void> {
    if (keys.length === 0) return;
    await this.query(`DELETE FROM ${this.table} WHERE k = ANY($1::text[]) AND owner = $2`, [[...new Set(keys)], owner]);
  }
}

/** Stamps `fences` (normalized: unique, in key order) inside the batch's transaction; throws naming the stale ones. */
export async function fenceIn(c: pg.PoolClient, table: string, fences: Fence[]): Promise<void> {
  if (fences.length === 0) return;
  const res = await c.query<PgRow>(
    `INSERT INTO ${table} AS t (k, epoch) SELECT * FROM unnest($1::text[], $2::bigint[])
     ON CONFLICT (k) DO UPDATE SET epoch = EXCLUDED.epoch WHERE t.epoch <= EXCLUDED.epoch RETURNING k`,
    [fences.map((f) => f.key), fences.map((f) => f.epoch)],
  );
  if (res.rows.length === fences.length) return;
  const won = new Set(res.rows.map((r) => r.k as string));
  throw staleFence(fences.filter((f) => !won.has(f.key)).map((f) => f.key));
}
