/**
 * The db monitor refuses to run with a login that is obviously privileged: on such an account the read-only
 * transaction and the statement guard are all that stand between a monitor's query and the server (COPY … TO
 * PROGRAM, pg_read_file, INTO OUTFILE, SET GLOBAL). postgres: superuser, or a member of pg_execute_server_program /
 * pg_read_server_files / pg_write_server_files; mysql/mariadb: global ALL PRIVILEGES, FILE, SUPER, SHUTDOWN,
 * CREATE USER, RELOAD, SYSTEM_VARIABLES_ADMIN or CONNECTION ADMIN in SHOW GRANTS. mssql has no server here to test a
 * probe against, so it has none (docs/checks-protocols.md). The verdict is cached per target (engine, host, port,
 * user, database) for `ttlMs`, so a run pays for the probe once per target and period, not every time.
 */
import type { DbKind, DbTarget } from './db-drivers.js';

export const LOGIN_GUARD_TTL_MS = 10 * 60_000;

/** Runs one statement on the check's connection, rows as arrays. */
export type RowsOf = (sql: string) => Promise<unknown[][]>;

export class PrivilegedLogin extends Error {
  constructor(readonly reasons: string[]) {
    super(
      `the login is privileged (${reasons.join(', ')}): use a least-privilege account for db monitors (docs/checks-protocols.md)`,
    );
  }
}

const PG_ROLES = ['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files'];
const PG_PROBE = `SELECT r.rolsuper, ${PG_ROLES.map((n) => `pg_has_role(current_user, '${n}', 'MEMBER')`).join(', ')}
  FROM pg_roles r WHERE r.rolname = current_user`;

const MYSQL_GLOBAL = new Set([
  'ALL PRIVILEGES',
  'ALL',
  'FILE',
  'SUPER',
  'SHUTDOWN',
  'CREATE USER',
  'RELOAD',
  'SYSTEM_VARIABLES_ADMIN',
  'CONNECTION_ADMIN',
  'CONNECTION ADMIN',
]);

/** The privileged grants among SHOW GRANTS lines (only grants ON *.* are global). */
export function mysqlPrivileged(lines: string[]): string[] {
  const out = new Set<string>();
  for (const line of lines) {
    const m = /^GRANT\s+(.+?)\s+ON\s+\*\.\*\s+TO\s/i.exec(line.trim());
    if (!m) continue;
    for (const p of m[1]!.split(',')) {
      const name = p.trim().toUpperCase().replace(/\s+/g, ' ');
      if (MYSQL_GLOBAL.has(name)) out.add(name);
    }
  }
  return [...out];
}

async function probe(kind: DbKind, rows: RowsOf): Promise<string[]> {
  if (kind === 'postgres') {
    const [row] = await rows(PG_PROBE);
    if (!row) return [];
    const reasons = row[0] === true ? ['superuser'] : [];
    PG_ROLES.forEach((n, i) => row[i + 1] === true && reasons.push(`member of ${n}`));
    return reasons;
  }
  if (kind === 'mysql')
    return mysqlPrivileged(
      (await rows('SHOW GRANTS')).map((r) => String((r[0] as string | Buffer | null | undefined) ?? '')),
    );
  return [];
}

export interface LoginGuard {
  /** Throws PrivilegedLogin when the target's login is known to be privileged (no connection needed). */
  before(t: DbTarget): void;
  /** After connecting: probes (once per target and period) and throws PrivilegedLogin when privileged. */
  afterConnect(t: DbTarget, rows: RowsOf): Promise<void>;
}

export function createLoginGuard(opts: { ttlMs?: number; now?: () => number; max?: number } = {}): LoginGuard {
  const ttlMs = opts.ttlMs ?? LOGIN_GUARD_TTL_MS;
  const now = opts.now ?? Date.now;
  const max = opts.max ?? 10_000;
  const cache = new Map<string, { reasons: string[]; untilMs: number }>();
  const keyOf = (t: DbTarget): string => JSON.stringify([t.kind, t.host, t.port, t.user, t.database ?? '']);
  const fresh = (t: DbTarget) => {
    const e = cache.get(keyOf(t));
    return e && e.untilMs > now() ? e : undefined;
  };
  return {
    before(t) {
      const e = fresh(t);
      if (e && e.reasons.length > 0) throw new PrivilegedLogin(e.reasons);
    },
    async afterConnect(t, rows) {
      let e = fresh(t);
      if (!e) {
        e = { reasons: await probe(t.kind, rows), untilMs: now() + ttlMs };
        if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        cache.set(keyOf(t), e);
      }
      if (e.reasons.length > 0) throw new PrivilegedLogin(e.reasons);
    },
  };
}
