/**
 * The only reader of process.env. Each service calls readConfig once in its main.ts and passes the result down.
 *
 * | variable        | default            | meaning                                                                 |
 * |-----------------|--------------------|-------------------------------------------------------------------------|
 * | DATA_DIR        | ./data             | data folder shared by both services (each keeps its own files in it)     |
 * | MONITOR_PORT    | 8051               | monitor service HTTPS port (0 = any free port)                          |
 * | AGENT_PORT      | 8070               | discovery agent HTTPS port                                              |
 * | PUSH_PORT       | (off)              | monitor service: a second HTTPS port serving only the push-monitor ping |
 * |                 |                    | routes, without client certificates (0 = any free port; docs/checks-push.md) |
 * | HOST            | 0.0.0.0            | listen address                                                          |
 * | LOG_LEVEL       | info               | trace, debug, info, warn, error (changed live by /updateSetting)        |
 * | ADMIN_PASSWORD  | (random, printed)  | the admin user's password, used only when the store has no users yet    |
 * | STORE_URL       | lmdb               | `lmdb` (embedded, in DATA_DIR) or `postgres://user@host:port/db`        |
 * | STORE_NAMESPACE | the service name   | PostgreSQL table namespace (kv_<namespace>), to run several installs    |
 * | LOG_STDOUT      | true               | also print warnings and errors to standard output                       |
 * | REQUEST_TIMEOUT_MS | 30000           | a request's headers and body must arrive within this (headers ≤ 10 s)   |
 * | PROBE           | default            | this instance's probe: with STORE_URL=postgres it runs monitors of this  |
 * |                 |                    | probe and those with probe empty, `*` or `default` (docs/cluster.md)    |
 * | LOCATION        | (empty)            | this instance's location label, shown in GET /cluster                   |
 * | INSTANCE        | the host name      | monitor: this instance's name on each result it records (where it ran)  |
 * | BACKUP_INTERVAL_HOURS | 0 (off)      | scheduled store backups every N hours (into BACKUP_DIR)                  |
 * | BACKUPS_KEPT    | 10                 | newest backups kept per service (scheduled and manual; not pre-migration)|
 * | BACKUP_DIR      | DATA_DIR/backups   | folder of the scheduled backups                                          |
 * | SHUTDOWN_TIMEOUT_MS | 10000          | on SIGTERM, how long in-flight checks and requests may take to finish    |
 * | ENRICH_WAIT_MS  | 2000               | monitor: how long a problem alert waits for the agent's enrichment (0: never) |
 * | ENRICH_TIMEOUT_MS | 3000             | monitor: bound on one call to a registered discovery agent              |
 */
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../errors.js';

export type ServiceName = 'monitor' | 'agent';
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type StoreConfig = { driver: 'lmdb'; path: string } | { driver: 'postgres'; url: string; namespace: string };

export interface ServiceConfig {
  service: ServiceName;
  dataDir: string;
  port: number;
  host: string;
  logLevel: LogLevel;
  /** True when LOG_LEVEL was given: it then wins over the stored logLevel setting at start. */
  logLevelExplicit: boolean;
  logStdout: boolean;
  adminPassword?: string;
  store: StoreConfig;
  certDir: string;
  logDir: string;
  /** Bound on receiving one request (headers and body); the headers alone get min(10 s, this). */
  requestTimeoutMs: number;
  /** The instance's probe (cluster membership, probe affinity) and location label. */
  probe: string;
  location: string;
  /** The instance's name on the results it records (history/origins.ts): INSTANCE, or the host name. */
  instance: string;
  /** On SIGTERM: how long in-flight checks, discovery cycles and requests may take before the service closes anyway. */
  shutdownTimeoutMs: number;
  /** Scheduled backups: every backupIntervalMs (0 = off) into backupDir; backupsKept newest kept per service. */
  backupIntervalMs: number;
  backupsKept: number;
  backupDir: string;
  /** Monitor service: port of the push-ping listener (no client certificate, ping routes only); undefined = off. */
  pushPort?: number;
  /** Monitor: how long a problem alert waits for the enrichment (0 = it never waits), and one agent call's bound. */
  enrichWaitMs: number;
  enrichTimeoutMs: number;
}

function parseCount(name: string, raw: string | undefined, dflt: number, max: number): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new AppError('VALIDATION', `${name} must be a whole number 0–${max}`);
  return n;
}

function parseTimeoutMs(name: string, raw: string | undefined, dflt: number): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 100 || n > 3_600_000) {
    throw new AppError('VALIDATION', `${name} must be a whole number of milliseconds between 100 and 3600000`);
  }
  return n;
}

function parseLabel(name: string, raw: string | undefined, dflt: string): string {
  const v = (raw ?? '').trim() || dflt;
  if (v.length > 100 || v === '*' || /\p{Cc}/u.test(v)) {
    throw new AppError('VALIDATION', `${name} must be 1-100 printable characters and not *`);
  }
  return v;
}

function parsePort(name: string, raw: string | undefined, dflt: number): number {
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new AppError('VALIDATION', `${name} must be a port number`);
  return n;
}

export function parseLogLevel(raw: string | undefined, dflt: LogLevel = 'info'): LogLevel {
  if (raw === undefined || raw === '') return dflt;
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new AppError('VALIDATION', `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return raw as LogLevel;
}

export function readConfig(service: ServiceName, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const port =
    service === 'monitor'
      ? parsePort('MONITOR_PORT', env.MONITOR_PORT, 8051)
      : parsePort('AGENT_PORT', env.AGENT_PORT, 8070);
  const storeUrl = env.STORE_URL || 'lmdb';
  const store: StoreConfig = /^postgres(ql)?:\/\//.test(storeUrl)
    ? { driver: 'postgres', url: storeUrl, namespace: env.STORE_NAMESPACE || service }
    : { driver: 'lmdb', path: path.join(dataDir, `${service}-db`) };
  return {
    service,
    dataDir,
    port,
    host: env.HOST || '0.0.0.0',
    logLevel: parseLogLevel(env.LOG_LEVEL),
    logLevelExplicit: !!env.LOG_LEVEL,
    logStdout: env.LOG_STDOUT !== 'false',
    adminPassword: env.ADMIN_PASSWORD || undefined,
    store,
    certDir: path.join(dataDir, 'certs'),
    logDir: path.join(dataDir, 'logs'),
    requestTimeoutMs: parseTimeoutMs('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 30_000),
    probe: parseLabel('PROBE', env.PROBE, 'default'),
    location: env.LOCATION ? parseLabel('LOCATION', env.LOCATION, '') : '',
    instance: env.INSTANCE ? parseLabel('INSTANCE', env.INSTANCE, '') : os.hostname(),
    shutdownTimeoutMs: parseTimeoutMs('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS, 10_000),
    backupIntervalMs: parseCount('BACKUP_INTERVAL_HOURS', env.BACKUP_INTERVAL_HOURS, 0, 24 * 366) * 3_600_000,
    backupsKept: Math.max(1, parseCount('BACKUPS_KEPT', env.BACKUPS_KEPT, 10, 10_000)),
    backupDir: path.resolve(env.BACKUP_DIR || path.join(dataDir, 'backups')),
    ...(service === 'monitor' && env.PUSH_PORT ? { pushPort: parsePort('PUSH_PORT', env.PUSH_PORT, 0) } : {}),
    enrichWaitMs: parseCount('ENRICH_WAIT_MS', env.ENRICH_WAIT_MS, 2000, 60_000),
    enrichTimeoutMs: parseTimeoutMs('ENRICH_TIMEOUT_MS', env.ENRICH_TIMEOUT_MS, 3000),
  };
}
