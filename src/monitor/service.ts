/**
 * The monitor service's composition: config → platform (certs, logs, store, users, tokens, app) → services → routes.
 * main.ts calls this and listens; integration tests call it with port 0 and a temporary DATA_DIR.
 */
import type { ServiceConfig } from '../core/config/env.js';
import { createPlatform, type Platform } from '../core/platform/platform.js';
import { DAY_MS, HOUR_MS, YEAR_MS } from '../core/auth/tokens.js';
import { registerAuthRoutes } from '../core/auth/auth.routes.js';
import { registerUserRoutes } from '../core/auth/users.routes.js';
import { registerOpsRoutes } from '../core/http/ops.routes.js';
import type { LogLevel } from '../core/config/env.js';
import { createMonitorSettings, createSmtpSettings } from './settings/monitor-settings.js';
import { registerSettingsRoutes } from './http/settings.routes.js';
import { registerMetricsRoute } from './http/metrics.routes.js';

export const MONITOR_API_VERSION = '2.0.0';

export const MONITOR_TOKEN_KINDS = {
  login: { lifetimeMs: 24 * HOUR_MS, tracked: false, adminOnly: false },
  component: { lifetimeMs: 60 * DAY_MS, tracked: false, adminOnly: false },
  component1y: { lifetimeMs: YEAR_MS, tracked: true, adminOnly: true },
  component15y: { lifetimeMs: 15 * YEAR_MS, tracked: true, adminOnly: true },
};

export interface MonitorService {
  platform: Platform;
  /** Listens; resolves the base URL. */
  start(): Promise<string>;
  stop(): Promise<void>;
}

const DESCRIPTION = `Monitor service API ${MONITOR_API_VERSION}. HTTPS with mutual TLS on every endpoint; JWT RS256 bearer tokens.
Every JSON value in request bodies is a string (real JSON numbers and booleans are accepted and read as strings).
Errors always have the body {code, error, message, field?}. Groups: readonly reads; user also manages and runs
monitors; admin also manages users, settings, SMTP, database, certificates and long-lived tokens.`;

export async function createMonitorService(cfg: ServiceConfig): Promise<MonitorService> {
  const platform = await createPlatform(cfg, {
    title: 'Monitor service', version: MONITOR_API_VERSION, description: DESCRIPTION,
    tokenKinds: MONITOR_TOKEN_KINDS, metricsPrefix: 'sentinel_monitor',
  });
  const { app, store, secrets, tokens, users, logger } = platform;
  const settings = createMonitorSettings(store, secrets, cfg.logLevel);
  const smtp = createSmtpSettings(store, secrets);
  await settings.load();
  await smtp.load();
  logger.setLevel(settings.get('logLevel') as LogLevel);
  settings.onChange((changed) => {
    if (changed.includes('logLevel')) logger.setLevel(settings.get('logLevel') as LogLevel);
  });

  registerAuthRoutes(app, {
    tokens, users,
    logins: [
      { path: '/login', kind: 'login', summary: 'Log in: a 24-hour token' },
      { path: '/loginComponent', kind: 'component', summary: 'Component login: a 60-day token' },
      { path: '/loginComponent1Year', kind: 'component1y', summary: 'Component login: a 1-year token (admins)' },
      { path: '/loginComponent15Years', kind: 'component15y', summary: 'Component login: a 15-year token (admins)' },
    ],
  });
  registerUserRoutes(app, { users });
  registerSettingsRoutes(app, { settings, smtp });
  registerOpsRoutes(app, { certDir: cfg.certDir, startedMs: platform.startedMs });
  registerMetricsRoute(app, platform.metrics);

  return {
    platform,
    start: () => platform.listen(),
    async stop() {
      await platform.close();
    },
  };
}
