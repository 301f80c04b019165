/**
 * One query per check on a fresh connection (closed on every path, so nothing leaks across runs), for PostgreSQL
 * (pg), MySQL/MariaDB (mysql2) and MSSQL (mssql/tedious).
 *
 * Safety: postgres runs with default_transaction_read_only=on and the extended protocol (one statement only), so
 * the query runs in a READ ONLY transaction; mysql runs after SET SESSION TRANSACTION READ ONLY, with
 * multipleStatements off, LOCAL_FILES cleared and an infileStreamFactory that refuses (no LOCAL INFILE); mssql has
 * no read-only switch: use a read-only login. Monitors should use read-only accounts in any case: none of this is a
 * boundary (docs/checks-protocols.md). With a LoginGuard (db-login-guard.ts) a privileged login is refused before the
 * query runs (postgres, mysql).
 *
 * Timeout: the caller's AbortSignal (the runner's deadline) cancels the query on the server (postgres: a
 * CancelRequest with the backend's key, plus statement_timeout; mysql: KILL QUERY from a second connection;
 * mssql: the TDS attention via request.cancel()) and closes the connection.
 *
 * Each driver loads at its kind's first query, not at service start (pg, mysql2 and mssql with tedious and its Azure
 * libraries are ≈ 65 MB resident together: docs/benchmarks.md "start to listening and idle RSS").
 */
import net from 'node:net';
import type { QueryArrayConfig } from 'pg';
import type { Connection as MysqlConnection } from 'mysql2/promise';
import type { Request as MssqlRequest } from 'mssql';
import { PrivilegedLogin, type LoginGuard } from './db-login-guard.js';

export const DB_KINDS = ['mysql', 'postgres', 'mssql'] as const;
export type DbKind = (typeof DB_KINDS)[number];
export const DEFAULT_PORTS: Record<DbKind, number> = { mysql: 3306, postgres: 5432, mssql: 1433 };

export interface DbTarget {
  kind: DbKind;
  host: string;
  port: number;
  user: string;
  password: string;
  database?: string;
}

export interface QueryFigures {
  rowCount: number;
  firstValue: string | null;
  columns: string[];
  connectMs: number;
  queryMs: number;
}

export type DbOutcome =
  | { ok: true; figures: QueryFigures }
  | { ok: false; kind: 'down' | 'error' | 'exception'; message: string };

const DOWN_CODES = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EAI_AGAIN',
  'ESOCKET',
  'ETIMEOUT',
  'PROTOCOL_CONNECTION_LOST',
  '57014',
  '70100',
]);

/** Renders the first column of the first row as a string (null stays null). */
export function renderValue(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (typeof v === 'object') return JSON.stringify(v);
  const scalar = v as string | number | boolean | bigint;
  return String(scalar);
}

function scrub(msg: string, password: string): string {
  return password.length >= 1 ? msg.split(password).join('***') : msg;
}

/** down for unreachable/timeout/cancel, error for auth and SQL errors; the message never holds the password. */
export function classify(e: unknown, t: DbTarget, aborted: boolean): DbOutcome & { ok: false } {
  const err = e as Error & { code?: string; errno?: number; originalError?: { code?: string } };
  const code = String(err.code ?? err.originalError?.code ?? '');
  const msg = scrub(err.message || String(e), t.password);
  if (e instanceof PrivilegedLogin) return { ok: false, kind: 'exception', message: msg };
  if (aborted) return { ok: false, kind: 'down', message: `timed out (query cancelled): ${msg}` };
  if (DOWN_CODES.has(code) || /timeout|timed out|terminated unexpectedly|connect ECONNREFUSED/i.test(msg)) {
    return { ok: false, kind: 'down', message: msg };
  }
  return { ok: false, kind: 'error', message: msg };
}

function firstOf(rows: unknown[], columns: string[]): string | null {
  const row = rows[0] as Record<string, unknown> | unknown[] | undefined;
  if (!row) return null;
  return renderValue(Array.isArray(row) ? row[0] : row[columns[0] ?? '']);
}

/** The deadline passed while the driver loaded (the first query of a kind): nothing was connected yet. */
function notAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('the deadline passed before connecting');
}

/** PostgreSQL CancelRequest (no auth needed: the backend's pid + secret key). */
function pgCancel(host: string, port: number, pid: number, key: number): void {
  const buf = Buffer.alloc(16);
  buf.writeInt32BE(16, 0);
  buf.writeInt32BE(80877102, 4);
  buf.writeInt32BE(pid, 8);
  buf.writeInt32BE(key, 12);
  const s = net.connect(port, host, () => s.end(buf));
  s.on('error', () => s.destroy());
  s.setTimeout(2000, () => s.destroy());
}

async function runPostgres(
  t: DbTarget,
  sql: string,
  timeoutMs: number,
  signal: AbortSignal,
  guard?: LoginGuard,
): Promise<QueryFigures> {
  const { default: pg } = await import('pg');
  notAborted(signal);
  const client = new pg.Client({
    host: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database: t.database || undefined,
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    options: '-c default_transaction_read_only=on',
    application_name: 'sentinel-monitor',
  });
  client.on('error', () => undefined);
  const c = client as unknown as { processID: number | null; secretKey: number | null };
  const onAbort = (): void => {
    if (c.processID !== null && c.secretKey !== null) pgCancel(t.host, t.port, c.processID, c.secretKey);
    setTimeout(() => void client.end().catch(() => undefined), 200).unref();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const t0 = performance.now();
    await client.connect();
    await guard?.afterConnect(t, async (q) => (await client.query({ text: q, rowMode: 'array' })).rows as unknown[][]);
    const t1 = performance.now();
    const res = await client.query({ text: sql, rowMode: 'array', queryMode: 'extended' } as QueryArrayConfig);
    const columns = (res.fields ?? []).map((f) => f.name);
    const rows = res.rows ?? [];
    return {
      rowCount: res.command === 'SELECT' || rows.length ? rows.length : (res.rowCount ?? 0),
      firstValue: firstOf(rows, columns),
      columns,
      connectMs: t1 - t0,
      queryMs: performance.now() - t1,
    };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await client.end().catch(() => undefined);
  }
}

async function runMysql(
  t: DbTarget,
  sql: string,
  timeoutMs: number,
  signal: AbortSignal,
  guard?: LoginGuard,
): Promise<QueryFigures> {
  const { default: mysql } = await import('mysql2/promise');
  notAborted(signal);
  const opts = {
    host: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database: t.database || undefined,
    connectTimeout: timeoutMs,
    multipleStatements: false,
    flags: ['-LOCAL_FILES'],
    infileStreamFactory: () => {
      throw new Error('LOCAL INFILE is refused by the monitor');
    },
  };
  let conn: MysqlConnection | undefined;
  let killing: Promise<void> | undefined;
  const onAbort = (): void => {
    if (!conn) return;
    const id = conn.threadId;
    killing = (async () => {
      const k = await mysql.createConnection({ ...opts, connectTimeout: 2000 });
      try {
        await k.query(`KILL QUERY ${Number(id)}`);
      } finally {
        await k.end().catch(() => undefined);
      }
    })().catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const t0 = performance.now();
    conn = await mysql.createConnection(opts);
    conn.on('error', () => undefined);
    if (signal.aborted) onAbort();
    const c = conn;
    await guard?.afterConnect(t, async (q) => (await c.query({ sql: q, rowsAsArray: true }))[0] as unknown[][]);
    await conn.query('SET SESSION TRANSACTION READ ONLY');
    const t1 = performance.now();
    const [rows, fields] = await conn.query({ sql, rowsAsArray: true });
    const columns = (fields ?? []).map((f) => f.name);
    const list = Array.isArray(rows) ? (rows as unknown[]) : [];
    const rowCount = Array.isArray(rows) ? list.length : ((rows as { affectedRows?: number }).affectedRows ?? 0);
    return {
      rowCount,
      firstValue: firstOf(list, columns),
      columns,
      connectMs: t1 - t0,
      queryMs: performance.now() - t1,
    };
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (killing) await killing;
    if (conn) await conn.end().catch(() => conn?.destroy());
  }
}

async function runMssql(t: DbTarget, sql: string, timeoutMs: number, signal: AbortSignal): Promise<QueryFigures> {
  const { default: mssql } = await import('mssql');
  notAborted(signal);
  const pool = new mssql.ConnectionPool({
    server: t.host,
    port: t.port,
    user: t.user,
    password: t.password,
    database: t.database || undefined,
    connectionTimeout: timeoutMs,
    requestTimeout: timeoutMs,
    pool: { max: 1, min: 0 },
    options: { encrypt: true, trustServerCertificate: true, appName: 'sentinel-monitor' },
  });
  pool.on('error', () => undefined);
  let request: MssqlRequest | undefined;
  const onAbort = (): void => {
    request?.cancel();
    void pool.close().catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const t0 = performance.now();
    await pool.connect();
    const t1 = performance.now();
    request = pool.request();
    request.arrayRowMode = true;
    const res = (await request.query(sql)) as unknown as {
      recordset?: unknown[] & { columns?: unknown };
      rowsAffected: number[];
    };
    const rs = res.recordset ?? [];
    const cols = (rs as unknown as { columns?: { name: string }[][] }).columns;
    const columns = Array.isArray(cols) ? cols.flat().map((c) => c.name) : [];
    const rowCount = res.recordset ? rs.length : res.rowsAffected.reduce((a, b) => a + b, 0);
    return { rowCount, firstValue: firstOf(rs, columns), columns, connectMs: t1 - t0, queryMs: performance.now() - t1 };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await pool.close().catch(() => undefined);
  }
}

const RUNNERS = { postgres: runPostgres, mysql: runMysql, mssql: runMssql } as const;

/** Connects, runs `sql`, closes. Resolves to figures or a classified failure; never rejects. With a guard, a
 * privileged login ends `exception` before the query runs (without connecting once it is known). */
export async function runDbQuery(
  t: DbTarget,
  sql: string,
  timeoutMs: number,
  signal: AbortSignal,
  guard?: LoginGuard,
): Promise<DbOutcome> {
  if (signal.aborted) return { ok: false, kind: 'down', message: 'timed out before the query started' };
  try {
    guard?.before(t);
  } catch (e) {
    return classify(e, t, false);
  }
  const aborted = new Promise<DbOutcome>((resolve) =>
    signal.addEventListener(
      'abort',
      () =>
        setTimeout(() => resolve({ ok: false, kind: 'down', message: 'timed out (query cancelled)' }), 1000).unref(),
      { once: true },
    ),
  );
  const run = RUNNERS[t.kind](t, sql, timeoutMs, signal, guard).then(
    (figures): DbOutcome => ({ ok: true, figures }),
    (e: unknown) => classify(e, t, signal.aborted),
  );
  // a driver that does not settle within 1 s of the abort is left to finish on its own
  return Promise.race([run, aborted]);
}
