/**
 * The PostgreSQL store's attempt counters (attempt-counters.ts): table kvl_<ns> (k text PRIMARY KEY, n int,
 * window_end_ms bigint, blocked_until_ms bigint). A hit locks its keys' rows (in key order, so two hits never
 * deadlock), applies `step` on PostgreSQL's clock and writes them back in one transaction: instances on one database
 * share one count. Rows whose window and block are over are swept every 1000 hits.
 */
import type pg from 'pg';
import type { PgRow } from './postgres-schema.js';
import { blockedForMs, step, type AttemptCounters, type AttemptKey, type CounterState } from './attempt-counters.js';

type Tx = <T>(fn: (c: pg.PoolClient) => Promise<T>) => Promise<T>;

const NOW_MS = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint';

export class PostgresAttemptCounters implements AttemptCounters {
  private hits = 0;

  constructor(
    private readonly table: string,
    private readonly tx: Tx,
  ) {}

  async hit(keys: AttemptKey[]): Promise<number> {
    const sorted = [...keys].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    const names = sorted.map((k) => k.key);
    const blocked = await this.tx(async (c) => {
      await c.query(
        `INSERT INTO ${this.table} (k, n, window_end_ms, blocked_until_ms)
         SELECT unnest($1::text[]), 0, 0, 0 ON CONFLICT DO NOTHING`,
        [names],
      );
      const res = await c.query<PgRow>(
        `SELECT k, n, window_end_ms, blocked_until_ms, ${NOW_MS} AS now_ms FROM ${this.table}
         WHERE k = ANY($1::text[]) ORDER BY k FOR UPDATE`,
        [names],
      );
      const states = new Map<string, CounterState>();
      let nowMs = 0;
      for (const r of res.rows) {
        nowMs = Number(r.now_ms);
        states.set(r.k as string, {
          n: r.n as number,
          windowEndMs: Number(r.window_end_ms),
          blockedUntilMs: Number(r.blocked_until_ms),
        });
      }
      const waitMs = Math.max(0, ...sorted.map((k) => blockedForMs(states.get(k.key), nowMs)));
      if (waitMs > 0) return waitMs;
      const next = sorted.map((k) => step(states.get(k.key), k, nowMs));
      await c.query(
        `UPDATE ${this.table} t SET n = u.n, window_end_ms = u.w, blocked_until_ms = u.b
         FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) AS u(k, n, w, b) WHERE t.k = u.k`,
        [names, next.map((s) => s.n), next.map((s) => s.windowEndMs), next.map((s) => s.blockedUntilMs)],
      );
      return 0;
    });
    if (++this.hits % 1000 === 0) await this.sweep();
    return blocked;
  }

  async release(keys: string[], clearKey: string): Promise<void> {
    await this.tx(async (c) => {
      await c.query(`SELECT k FROM ${this.table} WHERE k = ANY($1::text[]) ORDER BY k FOR UPDATE`, [
        [...keys, clearKey],
      ]);
      await c.query(`UPDATE ${this.table} SET n = greatest(n - 1, 0) WHERE k = ANY($1::text[])`, [keys]);
      await c.query(`DELETE FROM ${this.table} WHERE k = $1`, [clearKey]);
    });
  }

  private async sweep(): Promise<void> {
    await this.tx((c) =>
      c.query(`DELETE FROM ${this.table} WHERE window_end_ms <= ${NOW_MS} AND blocked_until_ms <= ${NOW_MS}`),
    );
  }
}
