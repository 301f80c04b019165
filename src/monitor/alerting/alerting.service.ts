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
 *
 * Parts: alert-decide.ts (a result's decision), alert-acks.ts (problems, acknowledgements), channel-test.ts,
 * alert-format.ts (alerts and views), alerting-context.ts (shared parts), alerting-types.ts (public types).
 */
import { createChannelRegistry } from '../../core/notify/registry.js';
import type { AlertState } from './alert-policy.js';
import { ACK_BUCKET } from './ack-records.js';
import { acknowledgeProblem, problems, unacknowledgeProblem } from './alert-acks.js';
import { decide, persistState } from './alert-decide.js';
import { AlertShards } from './alert-shards.js';
import type { AlertingContext } from './alerting-context.js';
import { type AlertingService, type AlertingServiceDeps, STATE_BUCKET } from './alerting-types.js';
import { createChannelSettings } from './channel-settings.js';
import { testChannel } from './channel-test.js';
import { createDeliveryQueue } from './delivery-queue.js';
import { createMaintenance } from './maintenance.js';
import { createWriteBuffer } from './write-buffer.js';

export type { AlertCluster } from './alert-shards.js';
export {
  STATE_BUCKET,
  type AlertMonitor,
  type AlertingService,
  type AlertingServiceDeps,
  type ProblemView,
  type TestResult,
} from './alerting-types.js';

function createContext(deps: AlertingServiceDeps): AlertingContext {
  const now = deps.now ?? Date.now;
  const log = deps.log;
  const channels = deps.channels ?? createChannelRegistry();
  const writes = createWriteBuffer(deps.store, log);
  const states = new Map<string, AlertState>();
  const channelSettings = createChannelSettings({
    store: deps.store,
    secrets: deps.secrets,
    channels,
    external: deps.external ?? {},
  });
  const queue = createDeliveryQueue({
    ...deps.queue,
    store: deps.store,
    writes,
    log,
    channels,
    now,
    getSettings: (id) => channelSettings.active(id),
    ...(deps.cluster
      ? { cluster: { owner: deps.cluster.memberId, ttlMs: deps.cluster.ttlMs, sweepMs: deps.cluster.heartbeatMs } }
      : {}),
  });
  const shards = deps.cluster
    ? new AlertShards(
        deps.cluster,
        deps.store,
        STATE_BUCKET,
        states,
        log,
        () => writes.drain(),
        (name, state, at) => persistState(cx, name, state, at),
      )
    : undefined;
  const cx: AlertingContext = {
    deps,
    now,
    log,
    channels,
    channelSettings,
    writes,
    states,
    queue,
    shards,
    waiting: new Map(),
  };
  return cx;
}

export function createAlertingService(deps: AlertingServiceDeps): AlertingService {
  const cx = createContext(deps);
  const { log, states, queue, shards, writes, waiting, channels, channelSettings } = cx;
  const maintenance = createMaintenance({ store: deps.store, now: cx.now });
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
        const t = cx.now();
        if (!shards) return decide(cx, monitor, status, result, t);
        // Cluster: decided only under the monitor's held lease, once its shard's state is read.
        const at = shards.heldAt(monitor.name, monitor.probe);
        if (at) shards.whenLoaded(at, () => decide(cx, monitor, status, result, t, at));
      } catch (err) {
        log.error({ err, monitor: monitor.name }, 'alerting: onResult failed');
      }
    },
    forget(name) {
      states.delete(name);
      const ops = [{ type: 'delete' as const, bucket: STATE_BUCKET, key: name }];
      if (shards) ops.push({ type: 'delete', bucket: ACK_BUCKET, key: name });
      writes.write(ops).catch(() => undefined);
    },
    testChannel: (id, opts) => testChannel(cx, id, opts),
    problems: (monitor) => problems(cx, monitor),
    acknowledge: (name, ack) => acknowledgeProblem(cx, name, ack),
    unacknowledge: (name) => unacknowledgeProblem(cx, name),
    deliveries: (limit) => queue.deliveries(limit),
    idle: async () => {
      await Promise.all([...waiting.values()]);
      return queue.idle();
    },
    pending: () => queue.pending(),
    outcomes: () => queue.outcomes(),
  };
}
