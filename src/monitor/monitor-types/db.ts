/**
 * db: connect to mysql (mysql2), postgres (pg) or mssql (mssql/tedious) with dbIp/dbPort/dbUser/dbPwd/dbDb, run
 * `query` within the monitor's timeout (cancelled on the server when it expires), report rowCount, firstValue and
 * queryMs. With patternComp/patternCompValCri the first value is compared (holds → severity CRITICAL).
 *
 * Outcomes: query ran → up; refused, unreachable, connect or query timeout → down; authentication or SQL error →
 * error with the server's message (never the password). One connection per check, always closed.
 * `query` must be one statement of a health-check kind (lib/sql-guard.ts, refused at create/update naming the
 * field; a stored query refused now runs EXCEPTION); a privileged login is refused before the query runs
 * (lib/db-login-guard.ts). Neither is a boundary: the account is (least-privilege GRANTs in docs/checks-protocols.md).
 * The read-only transaction (postgres), read-only session and refused LOCAL INFILE (mysql) stay (lib/db-drivers.ts).
 * Only dbType and query are required (spec): dbIp defaults to 127.0.0.1, dbPort to the engine's port, dbUser to the OS
 * account the monitor service runs as (what psql and the mysql client use without -U / -u).
 * The network policy applies to dbIp (resolved and checked; the driver connects to the checked address).
 */
import { Type } from '@sinclair/typebox';
import { Choice } from '../../core/http/schemas.js';
import { isIP } from 'node:net';
import { userInfo } from 'node:os';
import { AppError } from '../../core/errors.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType } from './types.js';
import { isPatternComp, PATTERN_COMPS, withPatternComp } from './lib/extract.js';
import { isPolicyError, resolveChecked } from './lib/network-policy.js';
import { DB_KINDS, DEFAULT_PORTS, runDbQuery, type DbKind, type DbTarget } from './lib/db-drivers.js';
import { createLoginGuard, type LoginGuard } from './lib/db-login-guard.js';
import { refusedStatement } from './lib/sql-guard.js';

const HOST_RE = /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;
const MAX_QUERY_CHARS = 10_000;
const DEFAULT_HOST = '127.0.0.1';

/** The OS account the service runs as (dbUser's default), read once. */
let osUser: string | undefined;
function defaultUser(): string {
  if (osUser === undefined) {
    try {
      osUser = userInfo().username;
    } catch {
      osUser = '';
    }
  }
  return osUser;
}

function validate(config: MonitorConfig): void {
  const kind = config.dbType?.trim().toLowerCase() ?? '';
  if (!(DB_KINDS as readonly string[]).includes(kind)) {
    throw AppError.badRequest(`dbType must be one of ${DB_KINDS.join(', ')}`, 'dbType');
  }
  const host = config.dbIp?.trim() || DEFAULT_HOST;
  if (isIP(host.replace(/^\[|\]$/g, '')) === 0 && !HOST_RE.test(host))
    throw AppError.badRequest('dbIp is not a valid host', 'dbIp');
  const port = config.dbPort?.trim();
  if (port && !(/^\d{1,5}$/.test(port) && +port >= 1 && +port <= 65535)) {
    throw AppError.badRequest('dbPort must be a number 1-65535', 'dbPort');
  }
  const query = config.query?.trim() ?? '';
  if (!query) throw AppError.badRequest('query is required', 'query');
  if (query.length > MAX_QUERY_CHARS)
    throw AppError.badRequest(`query is longer than ${MAX_QUERY_CHARS} characters`, 'query');
  const refused = refusedStatement(kind as DbKind, query);
  if (refused) throw AppError.badRequest(`query: ${refused}`, 'query');
  if (config.patternComp?.trim()) {
    if (!isPatternComp(config.patternComp.trim())) {
      throw AppError.badRequest(`patternComp must be one of ${PATTERN_COMPS.join(', ')}`, 'patternComp');
    }
    if (!config.patternCompValCri)
      throw AppError.badRequest('patternCompValCri is required with patternComp', 'patternCompValCri');
  }
}

export function targetOf(config: MonitorConfig): DbTarget {
  const kind = config.dbType!.trim().toLowerCase() as DbKind;
  return {
    kind,
    host: (config.dbIp?.trim() || DEFAULT_HOST).replace(/^\[|\]$/g, ''),
    port: config.dbPort?.trim() ? Number(config.dbPort) : DEFAULT_PORTS[kind],
    user: config.dbUser?.trim() || defaultUser(),
    password: config.dbPwd ?? '',
    database: config.dbDb?.trim() || undefined,
  };
}

const round = (v: number): number => Math.round(v * 1000) / 1000;

async function check(guard: LoginGuard, config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
  try {
    validate(config);
  } catch (e) {
    return { outcome: 'exception', responseTimeMs: 0, message: (e as Error).message };
  }
  const target = targetOf(config);
  const startMs = ctx.now();
  // Where and as whom the check connected (with the defaults, users should see what was used; never the password).
  const used = { dbType: target.kind, host: target.host, port: target.port, user: target.user };
  // The network policy: the driver connects to the checked address, never to a name it would resolve again.
  let address: string;
  try {
    address = (await resolveChecked(ctx.policy, target.host)).address;
  } catch (e) {
    const outcome = isPolicyError(e) ? 'exception' : 'down';
    return { outcome, responseTimeMs: ctx.now() - startMs, message: (e as Error).message, details: used };
  }
  const r = await runDbQuery({ ...target, host: address }, config.query!.trim(), ctx.timeoutMs, ctx.signal, guard);
  const wallMs = ctx.now() - startMs;
  if (!r.ok) return { outcome: r.kind, responseTimeMs: wallMs, message: r.message, details: used };
  const f = r.figures;
  const metrics: Record<string, number> = {
    rowCount: f.rowCount,
    queryMs: round(f.queryMs),
    connectMs: round(f.connectMs),
  };
  if (f.firstValue !== null && f.firstValue.trim() !== '' && Number.isFinite(Number(f.firstValue))) {
    metrics.value = Number(f.firstValue);
  }
  const result: CheckResult = {
    outcome: 'up',
    responseTimeMs: round(f.queryMs),
    message: `${f.rowCount} row(s); first value ${f.firstValue === null ? 'NULL' : `'${f.firstValue.slice(0, 200)}'`}`,
    metrics,
    details: { ...used, firstValue: f.firstValue, columns: f.columns },
  };
  return withPatternComp(result, f.firstValue ?? '', config);
}

const s = (description: string) => Type.Optional(Type.String({ description }));

/** The db type with its own privileged-login cache (one per service through the registry). */
export function createDbType(guard: LoginGuard = createLoginGuard()): MonitorType {
  return { ...dbTypeShape, check: (config, ctx) => check(guard, config, ctx) };
}

const dbTypeShape: Omit<MonitorType, 'check'> = {
  id: 'db',
  fields: Type.Object({
    dbType: Choice(DB_KINDS, { anyCase: true, description: 'database engine, any case' }),
    dbIp: Type.String({ description: 'Database server host', default: DEFAULT_HOST }),
    dbPort: s('Port; default 3306 (mysql), 5432 (postgres), 1433 (mssql)'),
    dbUser: s('User (default: the OS account the monitor service runs as); use a read-only account'),
    dbPwd: s('Password'),
    dbDb: s('Database name'),
    query: Type.String({
      maxLength: MAX_QUERY_CHARS,
      description:
        'One SQL statement: SELECT or WITH (mysql also SHOW; mssql also EXEC of a named procedure); runs read-only (postgres, mysql). Not a boundary: use a least-privilege account',
    }),
    patternComp: Type.Optional(
      Choice(PATTERN_COMPS, { optional: true, description: 'Comparison of the first value with patternCompValCri' }),
    ),
    patternCompValCri: s('Comparison value; when the comparison holds the level is CRITICAL'),
  }),
  required: ['dbType', 'query'],
  secretFields: ['dbPwd'],
  // The password goes to this server, database and login, and runs this query (docs/security.md §2).
  secretTarget: (c) => ({
    dbType: (c.dbType ?? '').trim().toLowerCase(),
    dbIp: (c.dbIp ?? '').trim().toLowerCase() || DEFAULT_HOST,
    dbPort: c.dbPort?.trim() || String(DEFAULT_PORTS[(c.dbType ?? '').trim().toLowerCase() as DbKind] ?? ''),
    dbDb: (c.dbDb ?? '').trim(),
    dbUser: (c.dbUser ?? '').trim(),
    query: (c.query ?? '').trim(),
  }),
  defaults: { dbIp: DEFAULT_HOST },
  validate,
  endpoint: (c) => {
    const kind = (c.dbType ?? '').trim().toLowerCase() as DbKind;
    const port = c.dbPort?.trim() ? Number(c.dbPort) : DEFAULT_PORTS[kind];
    return port ? { host: (c.dbIp?.trim() || DEFAULT_HOST).replace(/^\[|\]$/g, ''), port } : undefined;
  },
};

export const dbType: MonitorType = createDbType();
export default dbType;
