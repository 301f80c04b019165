/**
 * The monitor service's composition: config → platform (certs, logs, store, users, tokens, app) → services → routes.
 * main.ts calls this and listens; integration tests call it with port 0 and a temporary DATA_DIR.
 */
import type { ServiceConfig } from '../core/config/env.js';
import { MONITOR_FORMATS, MONITOR_MIGRATIONS } from './migrations.js';
import { settleWithin } from '../core/platform/drain.js';
import { DBNAMES } from './monitor-types/types.js';
import { createPlatform, type Platform } from '../core/platform/platform.js';
import { registerAuthRoutes } from '../core/auth/auth.routes.js';
import { registerUserRoutes } from '../core/auth/users.routes.js';
import { registerOpsRoutes } from '../core/http/ops.routes.js';
import type { LogLevel } from '../core/config/env.js';
import { createMonitorSettings, createSmtpSettings } from './settings/monitor-settings.js';
import { registerSettingsRoutes } from './http/settings.routes.js';
import { createSmtpConfig } from './settings/smtp-config.js';
import { registerMetricsRoute } from './http/metrics.routes.js';
import { createMetrics } from '../core/http/metrics.js';
import path from 'node:path';
import os from 'node:os';
import { createMonitorTypes } from './monitor-types/registry.js';
import { createNetworkPolicy, parseCidrList } from './monitor-types/lib/network-policy.js';
import type { DbName, NetworkPolicy } from './monitor-types/types.js';
import { MonitorsRepo, type StoredMonitor } from './monitors/monitors.repo.js';
import { MonitorsService } from './monitors/monitors.service.js';
import { auditStoredConfigs } from './monitors/stored-config-audit.js';
import { parseTags } from './monitors/common-fields.js';
import { RunService } from './monitors/run.service.js';
import { createEngine, type Engine } from './monitors/engine.js';
import type { RunObserver } from './scheduler/scheduler.js';
import { CertInventory } from './certificates/cert-inventory.js';
import { registerCertificateRoutes } from './http/certificates.routes.js';
import { applyParentSuppression } from './monitors/parent-suppression.js';
import { LastResults } from './monitors/last-results.js';
import { originFields } from './history/origins.js';
import { MonitorsApi } from './monitors/monitors.api.js';
import { registerMonitorMetrics } from './monitors/monitor-metrics.js';
import { registerHostGauges } from '../core/system/host-gauges.js';
import { registerMonitorRoutes } from './http/monitors.routes.js';
import { createHistoryService, type HistoryService } from './history/history.service.js';
import { createAutoThresholds } from './reporting/auto-threshold.js';
import { createDbAdmin } from './reporting/db-backup.js';
import { registerReportingRoutes } from './http/reporting.routes.js';
import { registerDbRoutes } from './http/db.routes.js';
import { createAlertingService, type AlertingService, type AlertMonitor } from './alerting/alerting.service.js';
import { createChannelRegistry, type ChannelRegistryDeps } from '../core/notify/registry.js';
import { SecretStore } from './secrets/secret-store.js';
import { registerSecretRoutes } from './http/secrets.routes.js';
import { registerAlertingRoutes } from './http/alerting.routes.js';
import { ArtifactStore } from './artifacts/artifact-store.js';
import { registerArtifactRoutes } from './http/artifacts.routes.js';
import { registerUiRoutes } from './http/ui.routes.js';
import { createClusterMember, type ClusterTiming } from './cluster/member.js';
import { registerClusterRoutes } from './http/cluster.routes.js';
import { createRunForwarding } from './cluster/run-forward.js';
import { createClusterClient } from './cluster/cluster-client.js';
import { AgentRegistry } from './agents/agent-registry.js';
import { registerAgentRoutes } from './http/agents.routes.js';
import { DAY_MS, HOUR_MS } from '../core/time.js';
import { PushLedger } from './push/push-ledger.js';
import { PushService } from './push/push.service.js';
import { createPushListener, type PushListener } from './push/push-listener.js';
import { registerPushRoutes } from './http/push.routes.js';
import { createAgentClient } from './agents/agent-client.js';
import { Enricher } from './agents/enricher.service.js';

export const MONITOR_API_VERSION = '2.0.0';

export const MONITOR_TOKEN_KINDS = {
  // A browser session refreshes its 24 h token for at most 7 days from the password; the others only rotate.
  login: { lifetimeMs: 24 * HOUR_MS, maxSessionMs: 7 * DAY_MS, tracked: false, adminOnly: false },
  component: { lifetimeMs: 60 * DAY_MS, tracked: true, adminOnly: false },
  component1y: { lifetimeYears: 1, tracked: true, adminOnly: true },
  component15y: { lifetimeYears: 15, tracked: true, adminOnly: true },
};

export interface MonitorService {
  platform: Platform;
  engine: Engine;
  history: HistoryService;
  alerting: AlertingService;
  /** Listens; resolves the base URL. */
  start(): Promise<string>;
  /** The push listener's base URL once started with PUSH_PORT (undefined without). */
  pushUrl(): string | undefined;
  stop(): Promise<void>;
}

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

export async function createMonitorService(
  cfg: ServiceConfig,
  opts: MonitorServiceOptions = {},
): Promise<MonitorService> {
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
  const { app, store, secrets, tokens, users, logger } = platform;
  const metrics = createMetrics(app, 'sentinel_monitor');
  const settings = createMonitorSettings(store, secrets, cfg.logLevel);
  const smtp = createSmtpSettings(store, secrets);
  await settings.load(platform.log);
  await smtp.load(platform.log);
  logger.setLevel((cfg.logLevelExplicit ? cfg.logLevel : settings.get('logLevel')) as LogLevel);
  settings.onChange((changed) => {
    if (changed.includes('logLevel')) logger.setLevel(settings.get('logLevel') as LogLevel);
  });

  const secretStore = new SecretStore(store, secrets);
  const agents = new AgentRegistry(store, secrets);
  await agents.load();
  const member = await createClusterMember(
    cfg,
    MONITOR_API_VERSION,
    platform.log.child({ component: 'cluster' }),
    opts.cluster,
  );
  const coordinator = member.coordinator;
  const monitorsRepo = new MonitorsRepo(store);
  const last = new LastResults();
  const history = await createHistoryService({
    store,
    log: platform.log.child({ component: 'history' }),
    retentionHours: () => Number(settings.get('dataRetention')),
    // A cluster: the instance holding a monitor's shard lease compacts its history (docs/cluster.md "History").
    holds:
      coordinator &&
      ((db, name) => {
        const m = monitorsRepo.get(name);
        return m?.type === db && coordinator.compactsHistory(name, m.config.probe);
      }),
    onRemoteLatest: ({ latest: l, metrics, details, origin }) => last.record({ ...l, metrics, details }, origin),
    // Each result records where it ran (history/origins.ts): this instance's probe, location and host.
    origin: { probe: cfg.probe, location: cfg.location, instance: os.hostname() },
  });
  coordinator?.onChange(() => history.ownershipChanged());
  const pushLedger = new PushLedger();
  const { types, close: closeTypes } = createMonitorTypes({ log: platform.log, dataDir: cfg.dataDir, pushLedger });
  const auto = createAutoThresholds({
    history,
    log: platform.log,
    settings,
    skip: (dbname) => types.get(dbname)?.autoThresholds === false,
  });
  settings.onChange((changed) => {
    if (changed.includes('autoThreshold') || changed.includes('autoThresholdRange')) void auto.recompute();
  });
  const alerting = createAlertingService({
    store,
    log: platform.log.child({ component: 'alerting' }),
    secrets,
    channels: createChannelRegistry(opts.notify),
    // email's settings are the SMTP settings (decrypted); smtpEnabled decides whether it is active.
    external: { email: () => Object.fromEntries([...smtp.definitions().keys()].map((k) => [k, smtp.get(k) ?? ''])) },
    getMonitor: (name) => {
      const m = monitorsRepo.get(name);
      return m ? alertView(m) : undefined;
    },
    // In a cluster the shard lease holder decides a monitor's alerts; deliveries are claimed (docs/cluster.md).
    ...(coordinator
      ? {
          cluster: {
            ownership: coordinator,
            memberId: member.identity.id,
            ttlMs: coordinator.ttlMs,
            heartbeatMs: coordinator.heartbeatMs,
            monitors: function* () {
              for (const m of monitorsRepo.all()) yield { name: m.name, probe: m.config.probe };
            },
          },
        }
      : {}),
  });
  const isAdmin = (username: string | undefined) => username !== undefined && users.get(username)?.group === 'admin';
  const monitors = new MonitorsService(monitorsRepo, types, secrets, Date.now, {
    maxMonitorsPerUser: () => Number(settings.get('maxMonitorsPerUser')),
    // Saving: the actor's group decides unscoped references (no actor: an internal call).
    authorizeRef: (use, monitor, actor) => secretStore.authorize(use, monitor, !actor || actor.group === 'admin'),
  });
  await monitorsRepo.load(); // after the service follows the store: a change during the load is not missed
  void auditStoredConfigs(monitors, types, platform.log.child({ component: 'monitors' })).catch((e: unknown) =>
    platform.log.error({ err: e }, 'stored configuration audit failed'),
  );
  const certs = new CertInventory(store, (e) => platform.log.warn({ err: e }, 'certificate inventory write failed'));
  await certs.load();
  for (const l of history.latestAll())
    last.set(l.name, {
      ts: l.ts,
      status: l.status,
      responseTimeMs: l.responseTimeMs,
      message: l.message,
      ...originFields(history.origin(l.originId)),
    });
  let policy: NetworkPolicy = buildPolicy();
  function buildPolicy(): NetworkPolicy {
    return createNetworkPolicy({
      allow: parseCidrList(settings.get('networkAllow') ?? ''),
      deny: parseCidrList(settings.get('networkDeny') ?? ''),
    });
  }
  settings.onChange((changed) => {
    if (changed.includes('networkAllow') || changed.includes('networkDeny')) policy = buildPolicy();
  });
  const artifacts = new ArtifactStore(
    path.join(cfg.dataDir, 'artifacts'),
    platform.log.child({ component: 'artifacts' }),
  );
  // Alerting's view of a monitor (stored config, secrets still sealed, + name and type): one per stored version; for
  // a type without secret fields that is exactly the run config, so the two share one object.
  const alertViews = new WeakMap<StoredMonitor, AlertMonitor>();
  const alertView = (m: StoredMonitor): AlertMonitor => {
    const t = types.get(m.type);
    if (t?.secretFields.length === 0 && !t.embeddedSecrets) return monitors.plainConfig(m);
    const cached = alertViews.get(m);
    if (cached) return cached;
    const v: AlertMonitor = Object.freeze({ ...m.config, name: m.name, type: m.type });
    alertViews.set(m, v);
    return v;
  };
  let recording = true;
  const runner = new RunService({
    monitors,
    types,
    log: platform.log.child({ component: 'runner' }),
    policy: () => policy,
    secrets: {
      get: (name) => secretStore.get(name),
      // Running: unscoped references resolve only for a monitor whose last change an admin made (docs/security.md §1).
      authorize: async (name, use) => {
        const m = monitorsRepo.get(name);
        return secretStore.authorize(use, { name, tags: m ? parseTags(m.config.tags) : [] }, isAdmin(m?.updatedBy));
      },
    },
    settings: { get: (k) => settings.get(k) },
    artifactRoot: artifacts.root,
    autoThresholds: (m) => auto.get(m.type, m.name),
    inDowntime: (m, nowMs) => alerting.statusFor(alertView(m), 'OK', nowMs) === 'DOWNTIME',
    sinks: {
      record(m, r) {
        // A run that outlived the shutdown bound ends after history closed: its result is dropped (logged), never
        // half-written.
        if (!recording) return void platform.log.warn({ monitor: m.name }, 'shutdown: result after close dropped');
        member.noteResult(r.ts);
        const suppressedBy = applyParentSuppression(monitors.dependencies, (n) => last.get(n)?.status, m, r);
        last.record(r, history.selfOrigin);
        certs.observe(m.name, m.type, r.details, r.ts);
        history.append(m.type, m.name, {
          ts: r.ts,
          status: r.status,
          responseTimeMs: r.responseTimeMs,
          metrics: r.metrics,
          message: r.message,
          details: r.details,
        });
        alerting.onResult(alertView(m), r.status, {
          message: r.message,
          responseTimeMs: r.responseTimeMs,
          suppressedBy,
          diagnosis: enricher.onResult(m, r),
        });
        if (Array.isArray(r.details?.artifacts) && r.details.artifacts.length > 0)
          void artifacts.enforceTotal(Number(settings.get('artifactMaxBytesTotal')));
      },
    },
  });
  const enricher = new Enricher({
    agents,
    client: createAgentClient({ certDir: cfg.certDir, timeoutMs: cfg.enrichTimeoutMs, policy: () => policy }),
    types,
    store,
    log: platform.log.child({ component: 'enrich' }),
    waitMs: cfg.enrichWaitMs,
    concurrency: 4,
    cacheMs: 5000,
  });
  const engine = createEngine({
    monitors,
    runner,
    types,
    settings,
    log: platform.log,
    observer: opts.schedulerObserver,
    ownership: member.coordinator,
  });
  monitors.onChange((name, m) => {
    if (!m) {
      history.forget(name);
      last.delete(name);
      alerting.forget(name);
      enricher.forget(name);
      certs.forget(name);
      void artifacts.removeMonitor(name);
    }
  });
  const clusterClient = createClusterClient(cfg.certDir, cfg.requestTimeoutMs);
  /** The address of the live instance holding a monitor's lease, when that is another instance. */
  const holderAddress = (name: string): string | undefined => {
    const m = monitorsRepo.get(name);
    const a = m && coordinator?.assignment(name, m.config.probe);
    if (!a || a.here || !a.owner || a.unassigned) return undefined;
    return coordinator!.view().members.find((x) => x.id === a.owner)?.address || undefined;
  };
  const push = new PushService({
    monitors,
    ledger: pushLedger,
    store,
    cluster: coordinator && {
      client: clusterClient,
      holderAddress,
      runsHere: (name) => coordinator.leaseFor(name, monitorsRepo.get(name)?.config.probe) !== undefined,
    },
    runNow: (name) => engine.runNow(name),
    timezone: () => settings.get('timezone') || 'UTC',
    log: platform.log.child({ component: 'push' }),
  });
  await push.load();
  coordinator?.onChange(() => push.rearm());
  let pushListener: PushListener | undefined;
  let pushUrl: string | undefined;
  const api = new MonitorsApi(
    monitors,
    engine,
    runner,
    last,
    history,
    (c) => [
      ...(c.emailOnF === 'true' && c.notifyStatus === 'on' && smtp.get('smtpEnabled') !== 'true'
        ? ['SMTP is not enabled (POST /setsmtpvault): email alerts cannot be sent yet']
        : []),
      ...monitors.dependencies
        .unknownParents(c)
        .map((n) => `parents: no monitor named ${n} (yet): until there is one it never suppresses an alert`),
    ],
    (m) => push.detailsOf(m, pushListener?.port() ?? null),
  );
  const dbAdmin = createDbAdmin({ store, dataDir: cfg.dataDir, afterBackup: () => platform.pruneBackups() });
  registerMonitorMetrics(metrics, { monitors, last, engine, runner });
  registerHostGauges(metrics, { prefix: 'sentinel_host' });

  registerAuthRoutes(app, {
    tokens,
    users,
    logins: [
      { path: '/login', kind: 'login', summary: 'Log in: a 24-hour token' },
      { path: '/loginComponent', kind: 'component', summary: 'Component login: a 60-day token' },
      { path: '/loginComponent1Year', kind: 'component1y', summary: 'Component login: a 1-year token (admins)' },
      { path: '/loginComponent15Years', kind: 'component15y', summary: 'Component login: a 15-year token (admins)' },
    ],
  });
  registerUserRoutes(app, { users });
  registerSettingsRoutes(app, { settings, smtp, smtpConfig: createSmtpConfig(smtp, { tls: opts.notify?.smtpTls }) });
  registerOpsRoutes(app, {
    certDir: cfg.certDir,
    startedMs: platform.startedMs,
    onCertificatesReloaded: () => pushListener?.reload(),
  });
  registerMetricsRoute(app, metrics);
  const runNow = createRunForwarding({
    client: clusterClient,
    log: platform.log.child({ component: 'cluster' }),
    holderAddress,
    local: (name, full) => api.runNow(name, full),
  });
  registerMonitorRoutes(app, { api, types, runNow });
  registerPushRoutes(app, { push, acceptForwarded: true });
  registerReportingRoutes(app, {
    history,
    monitorExists: (dbname: DbName, name: string) => monitorsRepo.get(name)?.type === dbname,
  });
  registerDbRoutes(app, { db: dbAdmin });
  registerSecretRoutes(app, { secrets: secretStore });
  registerAgentRoutes(app, { agents, enricher });
  registerAlertingRoutes(app, { alerting });
  registerArtifactRoutes(app, { artifacts });
  registerCertificateRoutes(app, { certs, now: Date.now, schedOf: (n) => monitorsRepo.get(n)?.config.sched });
  registerUiRoutes(app);
  registerClusterRoutes(app, {
    monitors: function* () {
      for (const m of monitorsRepo.all()) yield { name: m.name, probe: m.config.probe };
    },
    self: member.identity,
    coordinator: member.coordinator,
    rate: member.rate,
  });
  let sweepTimer: NodeJS.Timeout | undefined;
  let scheduling = false;
  platform.registerHealth({ scheduler: () => scheduling });

  return {
    platform,
    engine,
    history,
    alerting,
    async start() {
      const url = await platform.listen();
      await member.start(url.replace('127.0.0.1', os.hostname()));
      await alerting.start();
      engine.start();
      push.start();
      if (cfg.pushPort !== undefined) {
        pushListener = createPushListener({
          certDir: cfg.certDir,
          port: cfg.pushPort,
          host: cfg.host,
          requestTimeoutMs: cfg.requestTimeoutMs,
          log: platform.log.child({ component: 'push-listener' }),
          push,
        });
        pushUrl = await pushListener.listen();
      }
      scheduling = true;
      auto.start();
      const sweep = () =>
        void artifacts
          .sweep(Number(settings.get('dataRetention')) * HOUR_MS)
          .catch((e) => platform.log.warn({ err: e }, 'artifact sweep failed'));
      sweepTimer = setInterval(sweep, HOUR_MS);
      sweepTimer.unref();
      return url;
    },
    pushUrl: () => pushUrl,
    async stop() {
      platform.beginShutdown();
      scheduling = false;
      push.stop();
      await pushListener?.close();
      auto.stop();
      clearInterval(sweepTimer);
      // No new runs or requests from here; checks and requests in flight get shutdownTimeoutMs to finish and record.
      const drained = await settleWithin(Promise.all([platform.app.close(), engine.stop()]), cfg.shutdownTimeoutMs);
      if (!drained) {
        platform.log.warn(
          { timeoutMs: cfg.shutdownTimeoutMs },
          'shutdown: checks or requests still in flight, closing',
        );
        platform.app.server.closeAllConnections();
      }
      await member.stop();
      await alerting.stop();
      await closeTypes();
      recording = false;
      await history.close();
      await platform.close();
    },
  };
}
