/**
 * The monitor service's running side, third stage of service.ts's composition: the run service and where its results
 * go (last results, certificates, history, alerting, enrichment, artifacts), the engine (scheduler), the deletion
 * hook, push monitors, forwarding to a lease holder, the monitors API and the metrics.
 */
import type { ServiceConfig } from '../core/config/env.js';
import { registerHostGauges } from '../core/system/host-gauges.js';
import { createAgentClient } from './agents/agent-client.js';
import { Enricher } from './agents/enricher.service.js';
import { createClusterClient } from './cluster/cluster-client.js';
import { parseTags } from './monitors/common-fields.js';
import { createEngine, type Engine } from './monitors/engine.js';
import { registerMonitorMetrics } from './monitors/monitor-metrics.js';
import { MonitorsApi } from './monitors/monitors.api.js';
import { applyParentSuppression } from './monitors/parent-suppression.js';
import { RunService } from './monitors/run.service.js';
import type { PushListener } from './push/push-listener.js';
import { PushService } from './push/push.service.js';
import { createDbAdmin } from './reporting/db-backup.js';
import { holderAddressOf, type MonitorData } from './service-data.js';
import type { MonitorPlatform, MonitorServiceOptions } from './service-platform.js';

/** What start/stop change after composition: results are recorded until history closes; the push listener. */
export interface RunningState {
  recording: boolean;
  pushListener: PushListener | undefined;
  pushUrl: string | undefined;
}

export type MonitorRunning = Awaited<ReturnType<typeof createMonitorRunning>>;

function createEnricher(cfg: ServiceConfig, p: MonitorPlatform, d: MonitorData): Enricher {
  return new Enricher({
    agents: d.agents,
    client: createAgentClient({ certDir: cfg.certDir, timeoutMs: cfg.enrichTimeoutMs, policy: d.policy }),
    types: d.types,
    store: p.platform.store,
    log: p.platform.log.child({ component: 'enrich' }),
    waitMs: cfg.enrichWaitMs,
    concurrency: 4,
    cacheMs: 5000,
  });
}

function createRunner(p: MonitorPlatform, d: MonitorData, state: RunningState, enricher: Enricher): RunService {
  const { platform, settings } = p;
  const { monitors, monitorsRepo, secretStore, last, history, alerting, alertView, certs, artifacts } = d;
  return new RunService({
    monitors,
    types: d.types,
    log: platform.log.child({ component: 'runner' }),
    policy: d.policy,
    secrets: {
      get: (name) => secretStore.get(name),
      // Running: unscoped references resolve only for a monitor whose last change an admin made (docs/security.md §1).
      authorize: async (name, use) => {
        const m = monitorsRepo.get(name);
        return secretStore.authorize(use, { name, tags: m ? parseTags(m.config.tags) : [] }, d.isAdmin(m?.updatedBy));
      },
    },
    settings: { get: (k) => settings.get(k) },
    artifactRoot: artifacts.root,
    autoThresholds: (m) => d.auto.get(m.type, m.name),
    inDowntime: (m, nowMs) => alerting.statusFor(alertView(m), 'OK', nowMs) === 'DOWNTIME',
    sinks: {
      record(m, r) {
        // A run that outlived the shutdown bound ends after history closed: its result is dropped (logged), never
        // half-written.
        if (!state.recording)
          return void platform.log.warn({ monitor: m.name }, 'shutdown: result after close dropped');
        // A run that outlived its monitor (deleted, or deleted and created again, meanwhile): nothing is recorded —
        // no history row, last result, certificate or alert for a monitor that is gone or is another one now.
        const current = monitorsRepo.get(m.name);
        if (current?.createdMs !== m.createdMs)
          return void platform.log.info({ monitor: m.name }, 'result of a deleted monitor dropped');
        d.member.noteResult(r.ts);
        const suppressedBy = applyParentSuppression(monitors.dependencies, (n) => last.get(n)?.status, m, r);
        last.record(r, history.selfOrigin);
        certs.observe(m.name, m.type, r.details, r.ts);
        const { ts, status, responseTimeMs, metrics, message, details } = r;
        // Under the lease it is recorded under (run now on a member holding none: unfenced, docs/cluster.md).
        const fence = d.coordinator?.leaseFence(m.name, m.config.probe);
        history.append(m.type, m.name, { ts, status, responseTimeMs, metrics, message, details }, fence);
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
}

function createMonitorsApi(
  p: MonitorPlatform,
  d: MonitorData,
  r: { engine: Engine; runner: RunService; push: PushService },
  state: RunningState,
): MonitorsApi {
  const { monitors } = d;
  return new MonitorsApi(
    monitors,
    r.engine,
    r.runner,
    d.last,
    d.history,
    (c) => [
      ...(c.emailOnF === 'true' && c.notifyStatus === 'on' && p.smtp.get('smtpEnabled') !== 'true'
        ? ['SMTP is not enabled (POST /setsmtpvault): email alerts cannot be sent yet']
        : []),
      ...monitors.dependencies
        .unknownParents(c)
        .map((n) => `parents: no monitor named ${n} (yet): until there is one it never suppresses an alert`),
    ],
    (m) => r.push.detailsOf(m, state.pushListener?.port() ?? null),
  );
}

export async function createMonitorRunning(
  cfg: ServiceConfig,
  opts: MonitorServiceOptions,
  p: MonitorPlatform,
  d: MonitorData,
) {
  const { platform, settings } = p;
  const { monitors, monitorsRepo, coordinator } = d;
  const state: RunningState = { recording: true, pushListener: undefined, pushUrl: undefined };
  const enricher = createEnricher(cfg, p, d);
  const runner = createRunner(p, d, state, enricher);
  const engine = createEngine({
    monitors,
    runner,
    types: d.types,
    settings,
    log: platform.log,
    observer: opts.schedulerObserver,
    ownership: coordinator,
    lastRunMs: (name) => d.last.get(name)?.ts,
  });
  monitors.onChange((name, m) => {
    if (!m) {
      d.history.forget(name);
      d.last.delete(name);
      d.alerting.forget(name);
      enricher.forget(name);
      d.certs.forget(name);
      void d.artifacts.removeMonitor(name);
    }
  });
  const clusterClient = createClusterClient(cfg.certDir, cfg.requestTimeoutMs, platform.peers);
  const holderAddress = holderAddressOf(d.coordinator, d.monitorsRepo);
  const push = new PushService({
    monitors,
    ledger: d.pushLedger,
    store: platform.store,
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
  const api = createMonitorsApi(p, d, { engine, runner, push }, state);
  const dbAdmin = createDbAdmin({
    store: platform.store,
    dataDir: cfg.dataDir,
    afterBackup: () => platform.pruneBackups(),
  });
  registerMonitorMetrics(p.metrics, { monitors, last: d.last, engine, runner });
  registerHostGauges(p.metrics, { prefix: 'sentinel_host' });
  return { state, enricher, runner, engine, clusterClient, holderAddress, push, api, dbAdmin };
}
