/**
 * The cluster's rows in PostgreSQL, next to the KvStore's tables of the same namespace (docs/cluster.md):
 *
 *   cluster_members_<ns> (id PK, probe, location, version, address, started_ms, heartbeat_ms, results_per_min,
 *                         fenced_writes, clock_offset_ms)    one row per running instance, heartbeat every 5 s
 *   cluster_shards_<ns>  (grp, shard, owner, epoch, expires_ms, released_ms, PRIMARY KEY (grp, shard))  the leases
 *
 * Every time is PostgreSQL's clock (clock_timestamp() in Unix ms), so members' clocks never compare with each
 * other. Leases change hands only by compare-and-set on the epoch: a takeover is `UPDATE … SET epoch = epoch + 1
 * WHERE epoch = $old AND expires_ms < now`, a renewal or release `… WHERE owner = $me AND epoch = $held`; a
 * statement that matches no row changes nothing, so two members can never both win one epoch.
 */
import type { Pool } from 'pg';
import { AppError } from '../../core/errors.js';
import { loadPg, tableNames, type PgRow } from '../../core/storage/postgres-schema.js';

/** What a member says about itself. */
export interface MemberIdentity {
  id: string;
  probe: string;
  location: string;
  version: string;
  address: string;
  startedMs: number;
}

export interface MemberRow extends MemberIdentity {
  heartbeatMs: number;
  resultsPerMin: number;
  fencedWrites: number;
  /** This member's wall clock minus PostgreSQL's, as it measured at its previous heartbeat (clock-offset.ts). */
  clockOffsetMs: number;
}

export interface ShardRow {
  group: string;
  shard: number;
  owner: string;
  epoch: number;
  /** 0 once released. */
  expiresMs: number;
  /** When the owner last released it (0: never). */
  releasedMs: number;
}

export interface LeaseKey {
  group: string;
  shard: number;
  epoch: number;
}

const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export class ClusterStore {
  private calls = 0;

  private constructor(
    private readonly pool: Pool,
    private readonly members: string,
    private readonly shards: string,
  ) {}

  static async open(url: string, namespace: string): Promise<ClusterStore> {
    const { clusterMembers, clusterShards } = tableNames(namespace);
    const pg = await loadPg();
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined); // an idle client's failure surfaces on the next query
    const s = new ClusterStore(pool, clusterMembers, clusterShards);
    const c = await pool.connect().catch(async (err: unknown) => {
      await pool.end().catch(() => undefined);
      throw new AppError('UNAVAILABLE', 'cannot open the cluster tables', { cause: err });
    });
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`sentinel-cluster:${namespace}`]);
      await c.query(`CREATE TABLE IF NOT EXISTS ${s.members} (id text PRIMARY KEY, probe text NOT NULL,
        location text NOT NULL, version text NOT NULL, address text NOT NULL, started_ms bigint NOT NULL,
        heartbeat_ms bigint NOT NULL, results_per_min integer NOT NULL, fenced_writes bigint NOT NULL)`);
      await c.query(`CREATE TABLE IF NOT EXISTS ${s.shards} (grp text COLLATE "C" NOT NULL, shard integer NOT NULL,
        owner text NOT NULL, epoch bigint NOT NULL, expires_ms bigint NOT NULL, PRIMARY KEY (grp, shard))`);
      await c.query(`ALTER TABLE ${s.shards} ADD COLUMN IF NOT EXISTS released_ms bigint NOT NULL DEFAULT 0`);
      await c.query(`ALTER TABLE ${s.members} ADD COLUMN IF NOT EXISTS clock_offset_ms integer NOT NULL DEFAULT 0`);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      await pool.end().catch(() => undefined);
      throw new AppError('UNAVAILABLE', 'cannot open the cluster tables', { cause: err });
    } finally {
      c.release();
    }
    return s;
  }

  /** Writes this member's row with a fresh heartbeat; resolves PostgreSQL's clock (Unix ms). */
  async heartbeat(m: Omit<MemberRow, 'heartbeatMs'>): Promise<number> {
    const res = await this.pool.query<PgRow>(
      `INSERT INTO ${this.members} AS t (id, probe, location, version, address, started_ms, heartbeat_ms,
         results_per_min, fenced_writes, clock_offset_ms) VALUES ($1, $2, $3, $4, $5, $6, ${NOW_MS}, $7, $8, $9)
       ON CONFLICT (id) DO UPDATE SET heartbeat_ms = EXCLUDED.heartbeat_ms, results_per_min = EXCLUDED.results_per_min,
         fenced_writes = EXCLUDED.fenced_writes, address = EXCLUDED.address, clock_offset_ms = EXCLUDED.clock_offset_ms
       RETURNING heartbeat_ms`,
      [
        m.id,
        m.probe,
        m.location,
        m.version,
        m.address,
        m.startedMs,
        m.resultsPerMin,
        m.fencedWrites,
        Math.max(-2e9, Math.min(2e9, Math.round(m.clockOffsetMs))),
      ],
    );
    return Number(res.rows[0]!.heartbeat_ms);
  }

  /**
   * Members heard from within `ttlMs` (PostgreSQL's clock). Rows silent for 10 × ttlMs are deleted, on every 12th
   * call (a statement per heartbeat saved; a dead member's row is harmless meanwhile: it is not live).
   */
  async liveMembers(ttlMs: number): Promise<MemberRow[]> {
    if (this.calls++ % 12 === 0) {
      await this.pool.query<PgRow>(`DELETE FROM ${this.members} WHERE heartbeat_ms < ${NOW_MS} - $1`, [ttlMs * 10]);
    }
    const res = await this.pool.query<PgRow>(
      `SELECT * FROM ${this.members} WHERE heartbeat_ms >= ${NOW_MS} - $1 ORDER BY id`,
      [ttlMs],
    );
    return res.rows.map((r) => ({
      id: r.id as string,
      probe: r.probe as string,
      location: r.location as string,
      version: r.version as string,
      address: r.address as string,
      startedMs: Number(r.started_ms),
      heartbeatMs: Number(r.heartbeat_ms),
      resultsPerMin: Number(r.results_per_min),
      fencedWrites: Number(r.fenced_writes),
      clockOffsetMs: Number(r.clock_offset_ms ?? 0),
    }));
  }

  async shardRows(): Promise<ShardRow[]> {
    const res = await this.pool.query<PgRow>(
      `SELECT grp, shard, owner, epoch, expires_ms, released_ms FROM ${this.shards}`,
    );
    return res.rows.map((r) => ({
      group: r.grp as string,
      shard: r.shard as number,
      owner: r.owner as string,
      epoch: Number(r.epoch),
      expiresMs: Number(r.expires_ms),
      releasedMs: Number(r.released_ms),
    }));
  }

  /** Creates the leases of shards never held (epoch 1); resolves the ones this call created. */
  async claimNew(owner: string, group: string, shards: number[], ttlMs: number): Promise<LeaseKey[]> {
    if (shards.length === 0) return [];
    const res = await this.pool.query<PgRow>(
      `INSERT INTO ${this.shards} (grp, shard, owner, epoch, expires_ms)
       SELECT $1, s, $2, 1, ${NOW_MS} + $4 FROM unnest($3::int[]) AS s ON CONFLICT DO NOTHING RETURNING shard, epoch`,
      [group, owner, shards, ttlMs],
    );
    return res.rows.map((r) => ({ group, shard: r.shard as number, epoch: Number(r.epoch) }));
  }

  /** Takes expired leases whose epoch is still `epoch`, incrementing it; resolves the ones won. */
  async takeOver(owner: string, seen: LeaseKey[], ttlMs: number): Promise<LeaseKey[]> {
    return this.casLeases(
      `owner = $1, epoch = t.epoch + 1, expires_ms = ${NOW_MS} + $5`,
      `t.expires_ms < ${NOW_MS}`,
      owner,
      seen,
      ttlMs,
    );
  }

  /** Extends leases still held at their epoch; resolves the ones renewed (a missing one was lost). */
  async renew(owner: string, held: LeaseKey[], ttlMs: number): Promise<LeaseKey[]> {
    return this.casLeases(`expires_ms = ${NOW_MS} + $5`, 't.owner = $1', owner, held, ttlMs);
  }

  /** Gives leases up at once (expired), so the wanted member takes them on its next heartbeat. */
  async release(owner: string, held: LeaseKey[]): Promise<void> {
    await this.casLeases(`expires_ms = 0, released_ms = ${NOW_MS}`, 't.owner = $1 AND $5::bigint >= 0', owner, held, 0);
  }

  private async casLeases(set: string, cond: string, owner: string, keys: LeaseKey[], ttlMs: number) {
    if (keys.length === 0) return [];
    const res = await this.pool.query<PgRow>(
      `UPDATE ${this.shards} AS t SET ${set}
       FROM unnest($2::text[], $3::int[], $4::bigint[]) AS u(g, s, e)
       WHERE t.grp = u.g AND t.shard = u.s AND t.epoch = u.e AND ${cond}
       RETURNING t.grp, t.shard, t.epoch`,
      [owner, keys.map((k) => k.group), keys.map((k) => k.shard), keys.map((k) => k.epoch), ttlMs],
    );
    return res.rows.map((r) => ({ group: r.grp as string, shard: r.shard as number, epoch: Number(r.epoch) }));
  }

  /** Removes this member's row (a clean stop: the others see it gone at once). */
  async leave(id: string): Promise<void> {
    await this.pool.query<PgRow>(`DELETE FROM ${this.members} WHERE id = $1`, [id]);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
