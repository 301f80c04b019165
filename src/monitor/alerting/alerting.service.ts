/**
 * The alerting glue the run service calls. Per run: `statusFor` maps a computed status to DOWNTIME inside a
 * maintenance window, then `onResult` feeds the final status to the alert policy and queues the alerts it decides,
 * one per target channel. `onResult` is synchronous, never throws and never awaits the network: state lives in
 * memory (persisted in bucket 'alert_state' with the queued alerts, in one atomic batch) and delivery happens in the
 * queue's per-channel lanes.
 *
 * Targets of an alert come from the channel registry (routing.ts): every enabled channel the monitor's
 * `notifyChannels` selects (all when unset) and whose per-monitor rule lets it through (opt-outs such as notifySlack
 * 'false'; email needs emailOnF 'true' and emailR recipients).
 *
 * Acknowledgements: `acknowledge(name, {by, note})` marks a monitor's open problem as acknowledged (stored in its alert
 * state): no re-notify and no alert until the status gets worse or recovers (alert-policy.ts); the channels that take
 * acknowledgements (PagerDuty, Opsgenie, webhook) are told, through the same queue.
 *
 * Call `await start()` before the scheduler runs anything (it loads state, windows, channel settings and the queue).
 *
 * In a cluster (`cluster` set, docs/cluster.md "Alerting") the state and the queue are shared in the store: only the
 * member holding a monitor's shard lease decides its alerts, from state read at the lease's win, writing under the
 * lease's fence (alert-shards.ts); deliveries are claimed per channel and monitor (delivery-claims.ts). Open problems
 * and acknowledgements are read from and written to the store, so any member answers for all.
 */
import type { Logger } from 'pino';
import type { Alert, ProbeResult } from '../../core/notify/channel.js';
import { ChannelError } from '../../core/notify/channel.js';
import { type ChannelRegistry, createChannelRegistry } from '../../core/notify/registry.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import { AppError } from '../../core/errors.js';
import { type AlertState, acknowledge, evaluate, policyFor, sameState, unacknowledge } from './alert-policy.js';
import { type ChannelSettings, type Settings, createChannelSettings } from './channel-settings.js';
import {
  type DeliveryQueue,
  type DeliveryQueueOptions,
  type DeliveryRecord,
  createDeliveryQueue,
} from './delivery-queue.js';
import { type Maintenance, createMaintenance, parseList } from './maintenance.js';
import { resolveTargets } from './routing.js';
import { createWriteBuffer } from './write-buffer.js';
import { type AlertCluster, AlertShards, type HeldAt } from './alert-shards.js';

export type { AlertCluster };

export const STATE_BUCKET = 'alert_state';

/** Monitor fields alerting reads (string-valued as stored). */
export type AlertMonitor = Record<string, string | undefined> & { name: string; type?: string };

export interface AlertingServiceDeps {
  store: KvStore;
  log: Logger;
  secrets: SecretBox;
  /** Settings of the channels declared `external`, by id: email → the decrypted SMTP settings of /setsmtpvault. */
  external?: Readonly<Record<string, () => Settings | undefined>>;
  /** Defaults to the real channels; tests pass one with a TLS agent trusting their receivers. */
  channels?: ChannelRegistry;
  /** A monitor's stored fields (for acknowledgements); undefined when it does not exist. */
  getMonitor?: (name: string) => AlertMonitor | undefined;
  now?: () => number;
  /** Set in a cluster: alert state and deliveries are shared through the store (see the file comment). */
  cluster?: AlertCluster;
  queue?: Pick<
    DeliveryQueueOptions,
    'concurrency' | 'maxAttempts' | 'baseBackoffMs' | 'maxBackoffMs' | 'sendTimeoutMs' | 'deliveryLogMax'
  >;
}

export interface TestResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
  /** What a probe found (mode 'probe'). */
  message?: string;
}

/** An open problem as the API shows it. */
export interface ProblemView {
  monitor: string;
  /** Status of the open problem (the last one alerted or followed). */
  status: string;
  lastStatus?: string;
  openedMs?: number;
  lastAlertMs?: number;
  acknowledged?: { by: string; atMs: number; note?: string; status: string };
}

export interface AlertingService {
  start(): Promise<void>;
  stop(): Promise<void>;
  statusFor(monitor: AlertMonitor, computed: string, nowMs: number): string;
  /** `result.suppressedBy`: a failing parent (docs/alerting.md "Dependencies"): a problem alert is not sent and the
   * problem is not opened, so it alerts once the parent recovers if the monitor still fails; recoveries always go. */
  onResult(
    monitor: AlertMonitor,
    status: string,
    result?: {
      message?: string;
      responseTimeMs?: number;
      suppressedBy?: string;
      /** The enrichment's one-line summary (settles within ENRICH_WAIT_MS): a problem alert waits for it, and later
       * alerts and state writes of the monitor queue behind (order kept). */
      diagnosis?: Promise<string | undefined>;
    },
  ): void;
  /** Drops a deleted monitor's alert state. */
  forget(name: string): void;
  readonly maintenance: Maintenance;
  readonly channels: ChannelRegistry;
  readonly channelSettings: ChannelSettings;
  /** Sends a test message ('send', default) or runs the channel's probe ('probe'). */
  testChannel(id: string, opts?: { to?: string; mode?: 'send' | 'probe' }): Promise<TestResult>;
  /** Open problems, oldest first; `monitor` filters to one. */
  problems(monitor?: string): Promise<ProblemView[]>;
  /** Acknowledges a monitor's open problem; 404 unknown monitor, 409 no open problem. */
  acknowledge(name: string, ack: { by: string; note?: string }): Promise<ProblemView>;
  /** Removes the acknowledgement (re-notify resumes); 404 unknown monitor, 409 not acknowledged. */
  unacknowledge(name: string): Promise<ProblemView>;
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
  result?: { message?: string; responseTimeMs?: number; diagnosis?: string },
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
    ...(result?.diagnosis
      ? {
          diagnosis: result.diagnosis,
          message: result.message ? `${result.diagnosis}\n${result.message}` : result.diagnosis,
        }
      : {}),
    ...(result?.responseTimeMs !== undefined ? { responseTimeMs: result.responseTimeMs } : {}),
    timestampMs: nowMs,
  };
}

function fromProbe(p: ProbeResult): TestResult {
  return p.ok
    ? { ok: true, latencyMs: p.latencyMs, ...(p.message ? { message: p.message } : {}) }
    : { ok: false, latencyMs: p.latencyMs, error: p.message ?? 'failed' };
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
    external: deps.external ?? {},
  });
  const queue: DeliveryQueue = createDeliveryQueue({
    ...deps.queue,
    store: deps.store,
    writes,
    log,
    channels,
    now,
    getSettings: (id) => channelSettings.active(id),
    ...(deps.cluster
      ? {
          cluster: {
            owner: deps.cluster.memberId,
            ttlMs: deps.cluster.ttlMs,
            sweepMs: deps.cluster.heartbeatMs,
          },
        }
      : {}),
  });
  const shards = deps.cluster
    ? new AlertShards(deps.cluster, deps.store, STATE_BUCKET, states, log, () => writes.drain())
    : undefined;

  const active = (id: string) => channelSettings.active(id);
  // Per monitor: the write/enqueue still waiting for an enrichment; later ones of that monitor chain behind it.
  const waiting = new Map<string, Promise<void>>();
  const afterWait = (name: string, ready: Promise<string | undefined> | undefined, go: (d?: string) => unknown) => {
    const prev = waiting.get(name);
    if (!ready && !prev) return void go();
    const safe = (d?: string) => {
      try {
        go(d);
      } catch (err) {
        log.error({ err, monitor: name }, 'alerting: delayed alert failed');
      }
    };
    const p: Promise<void> = (prev ?? Promise.resolve())
      .then(() => ready)
      .then(safe, () => safe())
      .finally(() => {
        if (waiting.get(name) === p) waiting.delete(name);
      });
    waiting.set(name, p);
  };
  const toQueue = (m: AlertMonitor, base: Alert) =>
    resolveTargets(m, base.kind, channels, active).map((x) => ({
      channel: x.channel,
      alert: x.recipients ? { ...base, recipients: x.recipients } : base,
    }));
  const view = (name: string, s: AlertState): ProblemView => ({
    monitor: name,
    status: s.alertedStatus ?? s.lastStatus ?? 'OK',
    ...(s.lastStatus ? { lastStatus: s.lastStatus } : {}),
    ...(s.openedMs !== undefined ? { openedMs: s.openedMs } : {}),
    ...(s.lastAlertMs !== undefined ? { lastAlertMs: s.lastAlertMs } : {}),
    ...(s.ack ? { acknowledged: { ...s.ack } } : {}),
  });
  const monitorFor = (name: string): AlertMonitor => {
    const m = deps.getMonitor?.(name);
    if (!m) throw AppError.notFound(`monitor ${name} not found`);
    return m;
  };
  /** A monitor's alert state; in a cluster the store's unless its lease is held here (then `at` is set). */
  const current = async (m: AlertMonitor): Promise<{ state?: AlertState; at?: HeldAt }> => {
    const at = shards?.heldAt(m.name, m.probe);
    if (!shards || at) return { state: states.get(m.name), at };
    return { state: await deps.store.bucket(STATE_BUCKET).get<AlertState>(m.name) };
  };

  type ResultInfo = Parameters<AlertingService['onResult']>[2];
  const decide = (monitor: AlertMonitor, status: string, result: ResultInfo, t: number, at?: HeldAt): void => {
    try {
      const prev = states.get(monitor.name);
      const policy = policyFor({
        notifyStatus: monitor.notifyStatus,
        notifyAfter: monitor.notifyAfter,
        renotifyMinutes: monitor.renotifyMinutes,
        emailOnF: monitor.emailOnF,
      });
      let d = evaluate(prev, status, policy, t);
      if (d.alert?.kind === 'problem' && result?.suppressedBy) {
        d = evaluate(prev, status, { ...policy, notify: false }, t);
        log.info(
          { monitor: monitor.name, status, parent: result.suppressedBy },
          'alert suppressed: a parent is failing',
        );
      }
      const same = sameState(prev, d.state);
      // An unchanged state keeps its object: a steady monitor makes no long-lived garbage per result.
      if (!same) states.set(monitor.name, d.state);
      const ops = same ? [] : [{ type: 'put' as const, bucket: STATE_BUCKET, key: monitor.name, value: d.state }];
      const fence = at?.fence;
      if (!d.alert) {
        if (ops.length) afterWait(monitor.name, undefined, () => writes.write(ops, fence).catch(() => undefined));
        return;
      }
      const decided = d.alert;
      const ready = decided.kind === 'problem' ? result?.diagnosis : undefined;
      afterWait(monitor.name, ready, (diagnosis) => {
        // A lease lost while the diagnosis was awaited: nothing is written; the next holder judges from the store.
        if (at && !shards!.holds(at)) return void log.warn({ monitor: monitor.name }, 'alert dropped: lease lost');
        const base = toAlert(monitor, decided.kind, decided.status, decided.previousStatus, t, {
          message: result?.message,
          responseTimeMs: result?.responseTimeMs,
          diagnosis,
        });
        const list = toQueue(monitor, base);
        log.info(
          {
            monitor: monitor.name,
            kind: decided.kind,
            status,
            reason: decided.reason,
            channels: list.map((x) => x.channel),
            ...(diagnosis ? { diagnosis } : {}),
          },
          'alert',
        );
        queue.enqueueWith(list, ops, fence).catch(() => undefined);
      });
    } catch (err) {
      log.error({ err, monitor: monitor.name }, 'alerting: onResult failed');
    }
  };

  return {
    maintenance,
    channels,
    channelSettings,
    async start() {
      // Cluster: the states of held shards are read as their leases are won (alert-shards.ts), not all here.
      if (!shards) {
        states.clear();
        for await (const e of deps.store.bucket(STATE_BUCKET).range<AlertState>()) states.set(String(e.key), e.value);
      }
      await maintenance.load();
      await channelSettings.load();
      await queue.start();
    },
    async stop() {
      await Promise.all([...waiting.values()]);
      await queue.stop();
      await writes.drain();
      await channels.close();
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
        if (!shards) return decide(monitor, status, result, t);
        // Cluster: decided only under the monitor's held lease, once its shard's state is read.
        const at = shards.heldAt(monitor.name, monitor.probe);
        if (at) shards.whenLoaded(at, () => decide(monitor, status, result, t, at));
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
      const where = c.external ? 'smtp' : 'settings';
      if (need) throw AppError.badRequest(`${id}: ${need} is not set`, `${where}.${need}`);
      const ctx = { signal: AbortSignal.timeout(deps.queue?.sendTimeoutMs ?? 15_000), log };
      if (opts.mode === 'probe') {
        const probed = channels.probe(id, s, ctx);
        if (!probed) throw AppError.badRequest(`${id} has no connection check; send a test instead`, 'body.mode');
        return fromProbe(await probed);
      }
      const to = parseList(opts.to);
      if (c.endpoint.kind === 'smtp' && to.length === 0)
        throw AppError.badRequest('give `to` (comma-separated recipients) for an email test', 'body.to');
      const alert: Alert = {
        ...toAlert({ name: 'test-notification', type: 'test' }, 'test', 'OK', undefined, now()),
        message: 'This is a test notification: the channel works.',
        ...(to.length ? { recipients: to } : {}),
      };
      const started = performance.now();
      try {
        await channels.send(id, alert, s, ctx);
        return { ok: true, latencyMs: Math.round(performance.now() - started) };
      } catch (err) {
        const error = err instanceof ChannelError ? err.message : 'internal error';
        if (!(err instanceof ChannelError)) log.error({ err, channel: id }, 'alerting: channel test bug');
        return { ok: false, latencyMs: Math.round(performance.now() - started), error };
      }
    },
    async problems(monitor) {
      // Cluster: every member's monitors, from the store (the held ones' states here are as fresh or fresher).
      let all: Map<string, AlertState> = states;
      if (shards && monitor !== undefined) {
        const st = states.get(monitor) ?? (await deps.store.bucket(STATE_BUCKET).get<AlertState>(monitor));
        all = new Map(st ? [[monitor, st]] : []);
      } else if (shards) {
        all = new Map();
        for await (const e of deps.store.bucket(STATE_BUCKET).range<AlertState>()) all.set(String(e.key), e.value);
        for (const [name, st] of states) all.set(name, st);
      }
      const out: ProblemView[] = [];
      for (const [name, st] of all)
        if (st.alertedStatus !== undefined && (monitor === undefined || monitor === name)) out.push(view(name, st));
      return out.sort((a, b) => (a.openedMs ?? a.lastAlertMs ?? 0) - (b.openedMs ?? b.lastAlertMs ?? 0));
    },
    async acknowledge(name, ack) {
      const m = monitorFor(name);
      const { state, at } = await current(m);
      const next = acknowledge(state, ack, now());
      if (!next) throw AppError.conflict(`monitor ${name} has no open problem to acknowledge`);
      if (!shards || at) states.set(name, next);
      const ops = [{ type: 'put' as const, bucket: STATE_BUCKET, key: name, value: next }];
      const base: Alert = {
        ...toAlert(m, 'acknowledge', next.alertedStatus!, undefined, now()),
        acknowledgement: {
          by: next.ack!.by,
          atMs: next.ack!.atMs,
          ...(next.ack!.note ? { note: next.ack!.note } : {}),
        },
      };
      const list = toQueue(m, base);
      log.info({ monitor: name, by: ack.by, channels: list.map((x) => x.channel) }, 'alert acknowledged');
      await queue.enqueueWith(list, ops, at?.fence);
      return view(name, next);
    },
    async unacknowledge(name) {
      const { state, at } = await current(monitorFor(name));
      const next = unacknowledge(state);
      if (!next) throw AppError.conflict(`monitor ${name} has no acknowledged problem`);
      if (!shards || at) states.set(name, next);
      await writes.write([{ type: 'put', bucket: STATE_BUCKET, key: name, value: next }], at?.fence);
      log.info({ monitor: name }, 'alert acknowledgement removed');
      return view(name, next);
    },
    deliveries: (limit) => queue.deliveries(limit),
    idle: async () => {
      await Promise.all([...waiting.values()]);
      return queue.idle();
    },
    pending: () => queue.pending(),
    outcomes: () => queue.outcomes(),
  };
}
