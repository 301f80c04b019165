/**
 * The monitor service's routes, last stage of service.ts's composition: every HTTP route of the API registered on the
 * platform's app, each with the services it reads (routes stay thin; the services are built in service-data.ts and
 * service-runner.ts).
 */
import type { ServiceConfig } from '../core/config/env.js';
import { registerAuthRoutes } from '../core/auth/auth.routes.js';
import { registerUserRoutes } from '../core/auth/users.routes.js';
import { registerOpsRoutes } from '../core/http/ops.routes.js';
import { createRunForwarding } from './cluster/run-forward.js';
import { seriesRows } from './cluster/series-fetch.js';
import { registerAgentRoutes } from './http/agents.routes.js';
import { registerAlertingRoutes } from './http/alerting.routes.js';
import { registerArtifactRoutes } from './http/artifacts.routes.js';
import { registerCertificateRoutes } from './http/certificates.routes.js';
import { registerClusterRoutes } from './http/cluster.routes.js';
import { registerDbRoutes } from './http/db.routes.js';
import { registerMetricsRoute } from './http/metrics.routes.js';
import { registerMonitorRoutes } from './http/monitors.routes.js';
import { registerPushRoutes } from './http/push.routes.js';
import { registerReportingRoutes } from './http/reporting.routes.js';
import { registerSecretRoutes } from './http/secrets.routes.js';
import { registerSettingsRoutes } from './http/settings.routes.js';
import { registerUiRoutes } from './http/ui.routes.js';
import type { DbName } from './monitor-types/types.js';
import type { MonitorData } from './service-data.js';
import type { MonitorPlatform, MonitorServiceOptions } from './service-platform.js';
import type { MonitorRunning } from './service-runner.js';
import { createSmtpConfig } from './settings/smtp-config.js';

/** Login, users, settings, operations and metrics. */
function registerPlatformRoutes(
  cfg: ServiceConfig,
  opts: MonitorServiceOptions,
  p: MonitorPlatform,
  r: MonitorRunning,
) {
  const { app, tokens, users } = p.platform;
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
  registerSettingsRoutes(app, {
    settings: p.settings,
    smtp: p.smtp,
    smtpConfig: createSmtpConfig(p.smtp, { tls: opts.notify?.smtpTls }),
  });
  registerOpsRoutes(app, {
    certDir: cfg.certDir,
    startedMs: p.platform.startedMs,
    onCertificatesReloaded: () => r.state.pushListener?.reload(),
  });
  registerMetricsRoute(app, p.metrics);
}

export function registerMonitorServiceRoutes(
  cfg: ServiceConfig,
  opts: MonitorServiceOptions,
  p: MonitorPlatform,
  d: MonitorData,
  r: MonitorRunning,
): void {
  const { app } = p.platform;
  const { monitorsRepo, member } = d;
  registerPlatformRoutes(cfg, opts, p, r);
  const runNow = createRunForwarding({
    client: r.clusterClient,
    log: p.platform.log.child({ component: 'cluster' }),
    holderAddress: r.holderAddress,
    local: (name, full) => r.api.runNow(name, full),
    longestRunMs: (name) => {
      const m = monitorsRepo.get(name);
      try {
        return m && r.runner.longestRunMs(m);
      } catch {
        return undefined; // a config that cannot be read: the run reports it, the default deadline applies
      }
    },
    publish: () => d.history.flush(),
    follow: () => d.history.sync(),
  });
  registerMonitorRoutes(app, { api: r.api, types: d.types, runNow, peers: p.platform.peers });
  registerPushRoutes(app, { push: r.push, peers: p.platform.peers });
  registerReportingRoutes(app, {
    history: d.history,
    monitorExists: (dbname: DbName, name: string) => monitorsRepo.get(name)?.type === dbname,
  });
  registerDbRoutes(app, { db: r.dbAdmin });
  registerSecretRoutes(app, { secrets: d.secretStore });
  registerAgentRoutes(app, { agents: d.agents, enricher: r.enricher });
  registerAlertingRoutes(app, { alerting: d.alerting });
  registerArtifactRoutes(app, { artifacts: d.artifacts });
  registerCertificateRoutes(app, { certs: d.certs, now: Date.now, schedOf: (n) => monitorsRepo.get(n)?.config.sched });
  registerUiRoutes(app);
  registerClusterRoutes(app, {
    monitors: function* () {
      for (const m of monitorsRepo.all()) yield { name: m.name, probe: m.config.probe };
    },
    self: member.identity,
    coordinator: member.coordinator,
    rate: member.rate,
    seriesRows: (db, name) => seriesRows((x, n) => d.history.openRows(x, n), db, name),
  });
}
