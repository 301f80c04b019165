/**
 * The alerting glue the run service calls. Per run: `statusFor` maps a computed status to DOWNTIME inside a
 * maintenance window, then `onResult` feeds the final status to the alert policy and queues the alerts it decides,
 * one per target channel. `onResult` is synchronous, never throws and never awaits the network: state lives in
 * memory (persisted in bucket 'alert_state' with the queued alerts, in one atomic batch) and delivery happens in the
 * queue's per-channel lanes.
 *
 * Targets of an alert: email when the monitor has emailOnF 'true' and emailR recipients and SMTP is enabled; slack,
 * teams and pagerduty when the channel is enabled service-wide and the monitor has not opted out
 * (notifySlack / notifyTeams / notifyPagerduty 'false').
 *
 * Call `await start()` before the scheduler runs anything (it loads state, windows, channel settings and the queue).
 */
import type { Logger } from 'pino';
import type { Alert, SendContext } from '../../core/notify/channel.js';
import { ChannelError } from '../../core/notify/channel.js';
import { type ChannelRegistry, createChannelRegistry } from '../../core/notify/registry.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import { AppError } from '../../core/errors.js';
import { type AlertState, evaluate, policyFor, sameState } from './alert-policy.js';
import { type ChannelSettings, type Settings, createChannelSettings } from './channel-settings.js';
import {
  type DeliveryQueue,
  type DeliveryQueueOptions,
  type DeliveryRecord,
  createDeliveryQueue,
} from './delivery-queue.js';
import { type Maintenance, createMaintenance, parseList } from './maintenance.js';
import { createWriteBuffer } from './write-buffer.js';

export const STATE_BUCKET = 'alert_state';

/** Monitor fields alerting reads (string-valued as stored). */
export type AlertMonitor = Record<string, string | undefined> & { name: string; type?: string };

/** Monitor field that opts a monitor out of a service-wide channel ('false' = no alerts through it). */
export const OPT_OUT_FIELDS: Readonly<Record<string, string>> = {
  slack: 'notifySlack',
  teams: 'notifyTeams',
  pagerduty: 'notifyPagerduty',
};

export interface AlertingServiceDeps {
  store: KvStore;
  log: Logger;
  secrets: SecretBox;
  /** Decrypted SMTP settings of POST /setsmtpvault (smtpHost, smtpPort, ..., smtpEnabled, smtpSecure). */
  getSmtp: () => Settings | undefined;
  /** Defaults to the real channels; tests pass one with a TLS agent trusting their receivers. */
  channels?: ChannelRegistry;
  now?: () => number;
  queue?: Pick<
    DeliveryQueueOptions,
    'concurrency' | 'maxAttempts' | 'baseBackoffMs' | 'maxBackoffMs' | 'sendTimeoutMs' | 'deliveryLogMax'
  >;
}

export interface TestResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface AlertingService {
  start(): Promise<void>;
  stop(): Promise<void>;
  statusFor(monitor: AlertMonitor, computed: string, nowMs: number): string;
  onResult(monitor: AlertMonitor, status: string, result?: { message?: string; responseTimeMs?: number }): void;
  /** Drops a deleted monitor's alert state. */
  forget(name: string): void;
  readonly maintenance: Maintenance;
  readonly channels: ChannelRegistry;
  readonly channelSettings: ChannelSettings;
  testChannel(id: string, opts?: { to?: string }): Promise<TestResult>;
  deliveries(limit?: number): Promise<DeliveryRecord[]>;
  /** Test/bench helper: resolves when no alert is queued or in flight. */
  idle(): Promise<void>;
  pending(): Record<string, number>;
  /** Delivered / failed alert counts since start(). */
  outcomes(): { delivered: number; failed: number };
}

function toAlert(
  m: AlertMonitor,
  kind: Alert['kind'],
  status: string,
  previousStatus: string | undefined,
  nowMs: number,
  result?: { message?: string; responseTimeMs?: number },
): Alert {
  const tags = parseList(m.tags);
  return {
    kind,
    monitor: {
      name: m.name,
      type: m.type ?? 'unknown',
      ...(m.display_name ? { displayName: m.display_name } : {}),
      ...(m.probe ? { probe: m.probe } : {}),
      ...(m.location ? { location: m.location } : {}),
      ...(tags.length ? { tags } : {}),
    },
    status,
    ...(previousStatus ? { previousStatus } : {}),
    ...(result?.message ? { message: result.message } : {}),
    ...(result?.responseTimeMs !== undefined ? { responseTimeMs: result.responseTimeMs } : {}),
    timestampMs: nowMs,
  };
}

export function createAlertingService(deps: AlertingServiceDeps): AlertingService {
  const now = deps.now ?? Date.now;
  const log = deps.log;
  const channels = deps.channels ?? createChannelRegistry();
  const writes = createWriteBuffer(deps.store, log);
  const states = new Map<string, AlertState>();
  const maintenance = createMaintenance({ store: deps.store, now });
  const channelSettings = createChannelSettings({
    store: deps.store,
    secrets: deps.secrets,
    channels,
    getSmtp: deps.getSmtp,
  });
  const queue: DeliveryQueue = createDeliveryQueue({
    ...deps.queue,
    store: deps.store,
    writes,
    log,
    channels,
    now,
    getSettings: (id) => channelSettings.active(id),
  });

  const targets = (m: AlertMonitor): Array<{ channel: string; recipients?: string[] }> => {
    const out: Array<{ channel: string; recipients?: string[] }> = [];
    const recipients = parseList(m.emailR);
    if (m.emailOnF === 'true' && recipients.length > 0 && channelSettings.active('email'))
      out.push({ channel: 'email', recipients });
    for (const [id, field] of Object.entries(OPT_OUT_FIELDS)) {
      if (m[field] !== 'false' && channelSettings.active(id)) out.push({ channel: id });
    }
    return out;
  };

  return {
    maintenance,
    channels,
    channelSettings,
    async start() {
      states.clear();
      for await (const e of deps.store.bucket(STATE_BUCKET).range<AlertState>()) states.set(String(e.key), e.value);
      await maintenance.load();
      await channelSettings.load();
      await queue.start();
    },
    async stop() {
      await queue.stop();
      await writes.drain();
      for (const c of channels.values()) await c.close?.();
    },
    statusFor(monitor, computed, nowMs) {
      try {
        return maintenance.isInWindow(monitor, nowMs) ? 'DOWNTIME' : computed;
      } catch (err) {
        log.error({ err, monitor: monitor.name }, 'alerting: maintenance check failed');
        return computed;
      }
    },
    onResult(monitor, status, result) {
      try {
        const t = now();
        const prev = states.get(monitor.name);
        const policy = policyFor({
          notifyStatus: monitor.notifyStatus,
          notifyAfter: monitor.notifyAfter,
          renotifyMinutes: monitor.renotifyMinutes,
        });
        const d = evaluate(prev, status, policy, t);
        const same = sameState(prev, d.state);
        // An unchanged state keeps its object: a steady monitor makes no long-lived garbage per result.
        if (!same) states.set(monitor.name, d.state);
        const ops = same ? [] : [{ type: 'put' as const, bucket: STATE_BUCKET, key: monitor.name, value: d.state }];
        if (!d.alert) {
          if (ops.length) writes.write(ops).catch(() => undefined);
          return;
        }
        const base = toAlert(monitor, d.alert.kind, d.alert.status, d.alert.previousStatus, t, result);
        const list = targets(monitor).map((x) => ({
          channel: x.channel,
          alert: x.recipients ? { ...base, recipients: x.recipients } : base,
        }));
        log.info(
          {
            monitor: monitor.name,
            kind: d.alert.kind,
            status,
            reason: d.alert.reason,
            channels: list.map((x) => x.channel),
          },
          'alert',
        );
        queue.enqueueWith(list, ops).catch(() => undefined);
      } catch (err) {
        log.error({ err, monitor: monitor.name }, 'alerting: onResult failed');
      }
    },
    forget(name) {
      states.delete(name);
      writes.write([{ type: 'delete', bucket: STATE_BUCKET, key: name }]).catch(() => undefined);
    },
    async testChannel(id, opts = {}) {
      const c = channels.get(id);
      if (!c) throw AppError.notFound(`unknown channel ${id}`);
      const s = channelSettings.current(id) ?? {};
      const need = channelSettings.missing(id, s);
      if (need)
        throw AppError.badRequest(`${id}: ${need} is not set`, id === 'email' ? `smtp.${need}` : `settings.${need}`);
      const to = parseList(opts.to);
      if (id === 'email' && to.length === 0)
        throw AppError.badRequest('give `to` (comma-separated recipients) for an email test', 'body.to');
      const alert: Alert = {
        ...toAlert({ name: 'test-notification', type: 'test' }, 'test', 'OK', undefined, now()),
        message: 'This is a test notification: the channel works.',
        ...(to.length ? { recipients: to } : {}),
      };
      const ctx: SendContext = { signal: AbortSignal.timeout(deps.queue?.sendTimeoutMs ?? 15_000), log };
      const started = performance.now();
      try {
        await c.send(alert, s, ctx);
        return { ok: true, latencyMs: Math.round(performance.now() - started) };
      } catch (err) {
        const error = err instanceof ChannelError ? err.message : 'internal error';
        if (!(err instanceof ChannelError)) log.error({ err, channel: id }, 'alerting: channel test bug');
        return { ok: false, latencyMs: Math.round(performance.now() - started), error };
      }
    },
    deliveries: (limit) => queue.deliveries(limit),
    idle: () => queue.idle(),
    pending: () => queue.pending(),
    outcomes: () => queue.outcomes(),
  };
}
