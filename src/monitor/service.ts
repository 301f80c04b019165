/**
 * The monitor service's composition: config → platform (certs, logs, store, users, tokens, app; service-platform.ts)
 * → stores and state (service-data.ts) → running side (service-runner.ts) → routes (service-routes.ts); start and
 * stop here. main.ts calls this and listens; integration tests call it with port 0 and a temporary DATA_DIR.
 */
import os from 'node:os';
import type { ServiceConfig } from '../core/config/env.js';
import { settleWithin } from '../core/platform/drain.js';
import type { Platform } from '../core/platform/platform.js';
import { HOUR_MS } from '../core/time.js';
import type { AlertingService } from './alerting/alerting.service.js';
import type { HistoryService } from './history/history.service.js';
import type { Engine } from './monitors/engine.js';
import { createPushListener } from './push/push-listener.js';
import { createMonitorData, type MonitorData } from './service-data.js';
import { createMonitorPlatform, type MonitorPlatform, type MonitorServiceOptions } from './service-platform.js';
import { registerMonitorServiceRoutes } from './service-routes.js';
import { createMonitorRunning, type MonitorRunning } from './service-runner.js';

export { MONITOR_API_VERSION, MONITOR_TOKEN_KINDS, type MonitorServiceOptions } from './service-platform.js';

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

/** The parts start and stop act on, and the flags they set. */
interface Parts {
  cfg: ServiceConfig;
  p: MonitorPlatform;
  d: MonitorData;
  r: MonitorRunning;
  sweepTimer: NodeJS.Timeout | undefined;
  scheduling: boolean;
}

export async function createMonitorService(
  cfg: ServiceConfig,
  opts: MonitorServiceOptions = {},
): Promise<MonitorService> {
  const p = await createMonitorPlatform(cfg);
  const d = await createMonitorData(cfg, opts, p);
  const r = await createMonitorRunning(cfg, opts, p, d);
  registerMonitorServiceRoutes(cfg, opts, p, d, r);
  const parts: Parts = { cfg, p, d, r, sweepTimer: undefined, scheduling: false };
  p.platform.registerHealth({ scheduler: () => parts.scheduling });
  return {
    platform: p.platform,
    engine: r.engine,
    history: d.history,
    alerting: d.alerting,
    start: () => start(parts),
    pushUrl: () => r.state.pushUrl,
    stop: () => stop(parts),
  };
}

async function start(parts: Parts): Promise<string> {
  const { cfg, p, d, r } = parts;
  const { platform, settings } = p;
  const url = await platform.listen();
  await d.member.start(url.replace('127.0.0.1', os.hostname()));
  await d.alerting.start();
  r.engine.start();
  r.push.start();
  if (cfg.pushPort !== undefined) {
    r.state.pushListener = createPushListener({
      certDir: cfg.certDir,
      port: cfg.pushPort,
      host: cfg.host,
      requestTimeoutMs: cfg.requestTimeoutMs,
      log: platform.log.child({ component: 'push-listener' }),
      push: r.push,
    });
    r.state.pushUrl = await r.state.pushListener.listen();
  }
  parts.scheduling = true;
  d.auto.start();
  const sweep = () =>
    void d.artifacts
      .sweep(Number(settings.get('dataRetention')) * HOUR_MS)
      .catch((e) => platform.log.warn({ err: e }, 'artifact sweep failed'));
  parts.sweepTimer = setInterval(sweep, HOUR_MS);
  parts.sweepTimer.unref();
  return url;
}

async function stop(parts: Parts): Promise<void> {
  const { cfg, p, d, r } = parts;
  const { platform } = p;
  platform.beginShutdown();
  parts.scheduling = false;
  r.push.stop();
  await r.state.pushListener?.close();
  // A read of the shared thresholds in flight (a cluster) ends first, within a bound: the store may be unreachable.
  await settleWithin(d.auto.stop(), 3000);
  clearInterval(parts.sweepTimer);
  // No new runs or requests from here; checks and requests in flight get shutdownTimeoutMs to finish and record.
  const drained = await settleWithin(Promise.all([platform.app.close(), r.engine.stop()]), cfg.shutdownTimeoutMs);
  if (!drained) {
    platform.log.warn({ timeoutMs: cfg.shutdownTimeoutMs }, 'shutdown: checks or requests still in flight, closing');
    platform.app.server.closeAllConnections();
  }
  await d.member.stop();
  await d.alerting.stop();
  await d.closeTypes();
  r.state.recording = false;
  await d.history.close();
  await platform.close();
}
