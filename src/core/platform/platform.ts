/**
 * What both services share, assembled in one call from their main.ts: certificates, logs, store, secret box, users,
 * tokens, the HTTPS app with its guard. No globals: everything hangs off the returned object. Prometheus metrics
 * (core/http/metrics.ts) are the monitor's: the agent has no /metrics route, so it does not load prom-client.
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../config/env.js';
import { createServiceLogger, type ServiceLogger } from '../logging/logger.js';
import { mkdirPrivate, tightenModes } from './file-modes.js';
import { ensureCertificates } from '../pki/certs.js';
import { openStore } from '../storage/open-store.js';
import type { KvStore } from '../storage/kv-store.js';
import { migrateStore, type MigrateResult, type Migration } from '../storage/migrations.js';
import { withCoreMigrations } from './core-migrations.js';
import { pruneBackups, startBackupSchedule, type BackupSchedule } from '../storage/backups.js';
import { openSecretBox, type SecretBox } from '../secrets/secret-box.js';
import { UserService } from '../auth/users.service.js';
import { ensureTokenKey, TokenService, type TokenKindSpec } from '../auth/tokens.js';
import { PeerProof } from '../auth/peer-proof.js';
import { createApp } from '../http/app.js';
import { AppError } from '../errors.js';
import { passwordPolicyProblem } from '../auth/passwords.js';
import { claimInitialPassword, releaseInitialPassword, usesInitialPassword } from '../auth/initial-password.js';
import { readTlsFiles } from '../http/tls.js';
import { installAuthGuard } from '../http/auth-guard.js';
import { certificateCheck, registerHealthRoutes, storeCheck, type ReadyCheck } from '../http/health.routes.js';

export interface PlatformOptions {
  title: string;
  version: string;
  description: string;
  /** Token kinds and their lifetimes, per the service's spec. */
  tokenKinds: Record<string, TokenKindSpec>;
  /** The service's own store migrations, run after core's (src/<service>/migrations.ts). */
  migrations?: readonly Migration[];
  /** Which backup file names are this service's, for rotation (default: `<service>-…`). */
  backupOwns?: (file: string) => boolean;
  /** The versions of the service's own persisted formats (recorded in meta/format). */
  formats?: Record<string, number>;
  /** Hashes the initial admin password of a first start (default: argon2 in this process; the agent: a child's). */
  hashInitialPassword?: (password: string, log: Logger) => Promise<string>;
}

export interface Platform {
  cfg: ServiceConfig;
  logger: ServiceLogger;
  log: Logger;
  store: KvStore;
  secrets: SecretBox;
  users: UserService;
  tokens: TokenService;
  /** Signs and checks requests between instances of this service (a cluster's members): `auth: 'cluster'` routes. */
  peers: PeerProof;
  app: FastifyInstance;
  startedMs: number;
  /** What the start-up migration step did (format version, migrations run, pre-migration backup). */
  migration: MigrateResult;
  /**
   * Registers GET /healthz and /readyz: readiness = store, migrations, certificates, serving (false once close or
   * drain began) plus the service's own checks (e.g. its scheduler).
   */
  registerHealth(extra: Record<string, ReadyCheck>): void;
  /** Keeps the newest BACKUPS_KEPT of this service's backups (call after writing one). */
  pruneBackups(): Promise<void>;
  /** Marks the service as shutting down (/readyz answers 503 "serving" from then on). */
  beginShutdown(): void;
  /** Starts listening; resolves the base URL (https://127.0.0.1:<port>). */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * A fresh store gets the `admin` user: ADMIN_PASSWORD (refused when it fails the password policy) or the shared
 * generated file, which is deleted once every service's admin has changed its password (security §19).
 */
async function ensureInitialAdmin(
  cfg: ServiceConfig,
  users: UserService,
  log: Logger,
  hash?: PlatformOptions['hashInitialPassword'],
): Promise<void> {
  if (users.list().length === 0) {
    const given = cfg.adminPassword;
    const weak = given === undefined ? undefined : passwordPolicyProblem(given);
    if (weak) throw new AppError('VALIDATION', `ADMIN_PASSWORD is too weak: ${weak}`);
    const pw = given ? { password: given, generated: false } : claimInitialPassword(cfg.dataDir, cfg.service);
    await users.ensureAdmin(pw.password, hash && ((p) => hash(p, log)));
    if (!given && pw.generated) {
      console.log(
        `\n  Initial admin password (printed once, also in ${path.join(cfg.dataDir, 'initial-admin-password')}): ${pw.password}\n`,
      );
    }
  }
  if (!usesInitialPassword(cfg.dataDir, cfg.service)) return;
  users.onPasswordChange((username) => {
    if (username === 'admin') releaseInitialPassword(cfg.dataDir, cfg.service, log);
  });
}

export async function createPlatform(cfg: ServiceConfig, opts: PlatformOptions): Promise<Platform> {
  mkdirPrivate(cfg.dataDir);
  const logger = createServiceLogger({
    service: cfg.service,
    logDir: cfg.logDir,
    level: cfg.logLevel,
    stdout: cfg.logStdout,
  });
  const log = logger.log;
  // Files left readable by an older version, a restore or a copy become private (docs/security.md §11).
  const modes = tightenModes(cfg.dataDir);
  if (modes.changed.length > 0) {
    log.warn(
      { dataDir: cfg.dataDir, count: modes.changed.length, paths: modes.changed.slice(0, 1000) },
      `tightened the modes of ${modes.changed.length} paths in DATA_DIR (folders 0700, files 0600)`,
    );
  }
  if (modes.failed.length > 0)
    log.error({ failed: modes.failed.slice(0, 1000) }, 'could not make these DATA_DIR paths private');
  const certs = await ensureCertificates(cfg.certDir);
  if (certs.created) log.info({ certDir: cfg.certDir }, 'generated certificates');
  // A first start's JWT key is generated on the thread pool while the store opens and migrates.
  const tokenKeyFile = path.join(cfg.dataDir, `${cfg.service}-jwt-key.pem`);
  const tokenKey = ensureTokenKey(tokenKeyFile);
  tokenKey.catch(() => undefined); // awaited below; a failure before then must not be an unhandled rejection
  const store = await openStore(cfg.store, log);
  let migration: MigrateResult;
  try {
    migration = await migrateStore(store, {
      ...withCoreMigrations(opts.migrations, opts.formats),
      dataDir: cfg.dataDir,
      service: cfg.service,
      log,
      writtenBy: `${cfg.service} ${opts.version}`,
    });
  } catch (e) {
    await store.close();
    await logger.close();
    throw e;
  }
  const secrets = openSecretBox(cfg.dataDir, cfg.service);
  const users = new UserService(store, log);
  await users.load();
  // A fresh store's admin password is hashed (argon2 on the thread pool, or the service's hasher) while the JWT key
  // is made and the app is built.
  const admin = ensureInitialAdmin(cfg, users, log, opts.hashInitialPassword);
  admin.catch(() => undefined); // awaited below
  await tokenKey;
  const tokens = new TokenService(
    store,
    tokenKeyFile,
    `sentinel-${cfg.service}`,
    cfg.service,
    opts.tokenKinds,
    (claims) => users.acceptsToken(claims),
  );
  await tokens.load();
  const app = await createApp({
    log,
    tls: readTlsFiles(cfg.certDir),
    title: opts.title,
    version: opts.version,
    description: opts.description,
    timeouts: { requestMs: cfg.requestTimeoutMs },
  });
  try {
    await admin;
  } catch (e) {
    await store.close();
    await logger.close();
    throw e;
  }
  // Its key follows from the JWT key, which a cluster's members share (docs/cluster.md): one per service.
  const peers = new PeerProof(tokens.derivedKey(`sentinel-peer-proof-v1:${cfg.service}`));
  installAuthGuard(app, tokens, users, peers);
  const startedMs = Date.now();
  let serving = true;
  const owns = opts.backupOwns ?? ((f: string) => f.startsWith(`${cfg.service}-`));
  let backups: BackupSchedule | undefined;
  return {
    cfg,
    logger,
    log,
    store,
    secrets,
    users,
    tokens,
    peers,
    app,
    startedMs,
    migration,
    registerHealth(extra) {
      registerHealthRoutes(app, {
        checks: {
          store: storeCheck(store),
          migrations: () => migration.version > 0,
          certificates: certificateCheck(cfg.certDir),
          ...extra,
          serving: () => serving,
        },
      });
    },
    async pruneBackups() {
      const dirs = new Set([cfg.backupDir, path.join(cfg.dataDir, 'backups')]);
      for (const d of dirs) await pruneBackups(d, owns, cfg.backupsKept);
    },
    beginShutdown() {
      serving = false;
    },
    async listen() {
      await app.listen({ port: cfg.port, host: cfg.host });
      if (cfg.backupIntervalMs > 0) {
        const b = { store, service: cfg.service, dir: cfg.backupDir, keep: cfg.backupsKept, owns, log };
        backups = startBackupSchedule({ ...b, intervalMs: cfg.backupIntervalMs });
      }
      const addr = app.server.address();
      const port = typeof addr === 'object' && addr ? addr.port : cfg.port;
      return `https://127.0.0.1:${port}`;
    },
    async close() {
      serving = false;
      backups?.stop();
      await app.close();
      await store.close();
      await logger.close();
    },
  };
}
