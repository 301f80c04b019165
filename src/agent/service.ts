/**
 * The discovery agent's composition: config → platform (certs, logs, store, users, tokens, app; the same code as the
 * monitor's) → discovery services → routes. main.ts calls this and listens; integration tests call it with port 0.
 */
import os from 'node:os';
import path from 'node:path';
import type { ServiceConfig, LogLevel } from '../core/config/env.js';
import { AGENT_FORMATS, AGENT_MIGRATIONS } from './migrations.js';
import { settleWithin } from '../core/platform/drain.js';
import { createPlatform, type Platform } from '../core/platform/platform.js';
import { hashInitialPassword } from './initial-hash.js';
import { registerAuthRoutes } from '../core/auth/auth.routes.js';
import { registerUserRoutes } from '../core/auth/users.routes.js';
import { registerOpsRoutes } from '../core/http/ops.routes.js';
import { createCpuSampler } from '../core/system/cpu.js';
import { createProcessSampler } from '../core/system/processes.js';
import { createSocketOwnerResolver } from '../core/system/sockets.js';
import { AgentSettings } from './settings.js';
import { createCollectors } from './discovery/collectors/registry.js';
import { createDiscovery, type Discovery } from './discovery/cycle.js';
import { createMutex } from './discovery/lock.js';
import { StatusBook } from './discovery/status.js';
import { createAlertSender } from './discovery/alerts.js';
import { createProcessByPort } from './discovery/process-by-port.js';
import { startSchedule, type DiscoverySchedule } from './discovery/schedule.js';
import { createAgentDb } from './db.js';
import { createSwapGate } from './swap-gate.js';
import { createLogFiles } from './logs.js';
import { checkIntegrators } from './integrators.js';
import { registerDiscoveryRoutes } from './http/discovery.routes.js';
import { DiscoveryApi } from './discovery/discovery.api.js';
import { registerSettingsRoutes } from './http/settings.routes.js';
import { registerDbRoutes } from './http/db.routes.js';
import { registerLogRoutes } from './http/logs.routes.js';
import { HOUR_MS } from '../core/time.js';

export const AGENT_API_VERSION = '3.0.0';

export const AGENT_TOKEN_KINDS = {
  // 15-minute tokens: refreshes reach at most 12 h from the password, then log in again.
  api: { lifetimeMs: HOUR_MS / 4, maxSessionMs: 12 * HOUR_MS, tracked: false, adminOnly: false },
  component: { lifetimeMs: HOUR_MS / 4, maxSessionMs: 12 * HOUR_MS, tracked: false, adminOnly: false },
  component1y: { lifetimeYears: 1, tracked: true, adminOnly: true },
  component15y: { lifetimeYears: 15, tracked: true, adminOnly: true },
};

const DESCRIPTION = `discovery_agent API ${AGENT_API_VERSION}: host discovery (system, processes, sockets), thresholds and status,
settings, logs, database, users, certificates. HTTPS with mutual TLS; JWT RS256 bearer tokens (POST /api/auth: 15 min).
Every JSON value in request bodies is a string. Errors: {code, error, message, field?}. Groups: readonly reads; user also
runs discovery, computes thresholds, tests integrators and reads logs; admin also changes settings and SMTP, manages
users, the database and certificates.`;

export interface AgentServiceOptions {
  /** Start the sched timer (default true; tests drive cycles through /runDiscovery). */
  schedule?: boolean;
  /** Extra TLS options for SMTP (a test CA). */
  smtpTls?: { ca?: string | Buffer; rejectUnauthorized?: boolean };
  smtpTimeoutMs?: number;
}

export interface AgentService {
  platform: Platform;
  discovery: Discovery;
  start(): Promise<string>;
  stop(): Promise<void>;
}

export async function createAgentService(cfg: ServiceConfig, opts: AgentServiceOptions = {}): Promise<AgentService> {
  const platform = await createPlatform(cfg, {
    title: 'discovery_agent',
    version: AGENT_API_VERSION,
    description: DESCRIPTION,
    tokenKinds: AGENT_TOKEN_KINDS,
    migrations: AGENT_MIGRATIONS,
    formats: AGENT_FORMATS,
    hashInitialPassword,
  });
  const { app, store, secrets, tokens, users, logger, log } = platform;
  const settings = new AgentSettings(store, secrets);
  await settings.load(log);
  logger.setLevel((cfg.logLevelExplicit ? cfg.logLevel : settings.get().logLevel) as LogLevel);
  settings.onChange((s) => logger.setLevel(s.logLevel as LogLevel));

  const mutex = createMutex();
  const status = new StatusBook(store);
  await status.load();
  const processes = createProcessSampler();
  const resolver = createSocketOwnerResolver();
  const alerts = createAlertSender({
    settings,
    log,
    host: os.hostname(),
    email: { tls: opts.smtpTls },
    timeoutMs: opts.smtpTimeoutMs,
  });
  const discovery = createDiscovery({
    collectors: createCollectors({ processes, sockets: resolver }),
    store,
    settings,
    status,
    mutex,
    metricsFile: path.join(cfg.dataDir, 'discover_metrics.json'),
    log,
    alerts,
  });
  const gate = createSwapGate();
  const db = createAgentDb({
    store,
    dataDir: cfg.dataDir,
    mutex,
    status,
    gate,
    afterBackup: () => platform.pruneBackups(),
  });

  registerAuthRoutes(app, {
    tokens,
    users,
    logins: [
      { path: '/api/auth', kind: 'api', summary: 'Log in: a 15-minute API token' },
      { path: '/loginComponent', kind: 'component', summary: 'Component login: a 15-minute token' },
      { path: '/loginComponent1Year', kind: 'component1y', summary: 'Component login: a 1-year token (admins)' },
      { path: '/loginComponent15Years', kind: 'component15y', summary: 'Component login: a 15-year token (admins)' },
    ],
  });
  registerUserRoutes(app, { users });
  registerOpsRoutes(app, { certDir: cfg.certDir, startedMs: platform.startedMs, uptime: false });
  const discoveryApi = new DiscoveryApi({
    discovery,
    lookup: createProcessByPort({ resolver, processes }),
    store,
    status,
    mutex,
    gate,
    cpu: createCpuSampler(),
  });
  registerDiscoveryRoutes(app, { api: discoveryApi });
  registerSettingsRoutes(app, {
    settings,
    checkIntegrators: () => checkIntegrators(settings, { tls: opts.smtpTls, timeoutMs: opts.smtpTimeoutMs }),
  });
  registerDbRoutes(app, { db });
  registerLogRoutes(app, {
    logs: createLogFiles({ logDir: logger.logDir, currentFile: logger.file, service: cfg.service }),
  });

  let schedule: DiscoverySchedule | undefined;
  let scheduling = false;
  // Without the schedule (tests drive cycles by hand) "scheduler" means the discovery service is up.
  platform.registerHealth({ scheduler: () => scheduling });
  return {
    platform,
    discovery,
    async start() {
      const url = await platform.listen();
      if (opts.schedule !== false) schedule = startSchedule(discovery, settings, log);
      scheduling = true;
      return url;
    },
    async stop() {
      platform.beginShutdown();
      scheduling = false;
      schedule?.stop();
      // Requests and a cycle in flight get shutdownTimeoutMs to finish (run() joins the cycle; never starts one here).
      // A cycle cut off by the bound writes nothing half: its writes are atomic batches under the store mutex.
      const cycle = discovery.running ? discovery.run().catch(() => undefined) : undefined;
      if (!(await settleWithin(Promise.all([platform.app.close(), cycle]), cfg.shutdownTimeoutMs))) {
        log.warn(
          { timeoutMs: cfg.shutdownTimeoutMs },
          'shutdown: requests or a discovery cycle still in flight, closing',
        );
        platform.app.server.closeAllConnections();
      }
      await alerts.close();
      await platform.close();
    },
  };
}
