/**
 * The monitor service's platform: the API's identity (version, description, token kinds), the shared platform (certs,
 * logs, store, users, tokens, app) and the settings read at start (monitor settings, SMTP, log level). First stage of
 * service.ts's composition; service.ts re-exports the constants and options.
 */
import type { LogLevel, ServiceConfig } from '../core/config/env.js';
import { createMetrics } from '../core/http/metrics.js';
import type { ChannelRegistryDeps } from '../core/notify/registry.js';
import { createPlatform } from '../core/platform/platform.js';
import { DAY_MS, HOUR_MS } from '../core/time.js';
import type { ClusterTiming } from './cluster/member.js';
import { MONITOR_FORMATS, MONITOR_MIGRATIONS } from './migrations.js';
import { DBNAMES } from './monitor-types/types.js';
import type { RunObserver } from './scheduler/scheduler.js';
import { createMonitorSettings, createSmtpSettings } from './settings/monitor-settings.js';

export const MONITOR_API_VERSION = '2.0.0';

export const MONITOR_TOKEN_KINDS = {
  // A browser session refreshes its 24 h token for at most 7 days from the password; the others only rotate.
  login: { lifetimeMs: 24 * HOUR_MS, maxSessionMs: 7 * DAY_MS, tracked: false, adminOnly: false },
  component: { lifetimeMs: 60 * DAY_MS, tracked: true, adminOnly: false },
  component1y: { lifetimeYears: 1, tracked: true, adminOnly: true },
  component15y: { lifetimeYears: 15, tracked: true, adminOnly: true },
};

const DESCRIPTION = `Monitor service API ${MONITOR_API_VERSION}. HTTPS with mutual TLS on every endpoint; JWT RS256 bearer tokens.
Every JSON value in request bodies is a string (real JSON numbers and booleans are accepted and read as strings).
Errors always have the body {code, error, message, field?}. Groups: readonly reads; user also manages and runs
monitors; admin also manages users, settings, SMTP, database, certificates and long-lived tokens.`;

export interface MonitorServiceOptions {
  /** Sees every run start and end (benchmarks). */
  schedulerObserver?: RunObserver;
  /** The notification channels' network (tests: an agent trusting local receivers, shorter timeouts). */
  notify?: ChannelRegistryDeps;
  /** Cluster heartbeat and lease timing (tests shorten them; docs/cluster.md). */
  cluster?: ClusterTiming;
}

export type MonitorPlatform = Awaited<ReturnType<typeof createMonitorPlatform>>;

export async function createMonitorPlatform(cfg: ServiceConfig) {
  const platform = await createPlatform(cfg, {
    title: 'Monitor service',
    version: MONITOR_API_VERSION,
    description: DESCRIPTION,
    tokenKinds: MONITOR_TOKEN_KINDS,
    migrations: MONITOR_MIGRATIONS,
    // Its backups: scheduled/pre-migration ones `monitor-…`, POST /backupDatabase ones `<dbname>-…`.
    backupOwns: (f) => f.startsWith('monitor-') || DBNAMES.some((d) => f.startsWith(`${d}-`)),
    formats: MONITOR_FORMATS,
  });
  const { app, store, secrets, logger } = platform;
  const metrics = createMetrics(app, 'sentinel_monitor');
  const settings = createMonitorSettings(store, secrets, cfg.logLevel);
  const smtp = createSmtpSettings(store, secrets);
  await settings.load(platform.log);
  await smtp.load(platform.log);
  logger.setLevel((cfg.logLevelExplicit ? cfg.logLevel : settings.get('logLevel')) as LogLevel);
  settings.onChange((changed) => {
    if (changed.includes('logLevel')) logger.setLevel(settings.get('logLevel') as LogLevel);
  });
  return { platform, metrics, settings, smtp };
}
