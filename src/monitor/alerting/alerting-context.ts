/**
 * The alerting service's internal parts, shared by its modules (alerting.service.ts the composition, alert-decide.ts
 * the decisions per result, alert-acks.ts open problems and acknowledgements, channel-test.ts channel tests): the
 * in-memory states, the write buffer, the queue, a cluster's shards, and the per-monitor chain of writes waiting for
 * an enrichment.
 */
import type { Logger } from 'pino';
import type { Alert } from '../../core/notify/channel.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import type { AlertState } from './alert-policy.js';
import type { AlertShards } from './alert-shards.js';
import type { AlertMonitor, AlertingServiceDeps } from './alerting-types.js';
import type { ChannelSettings } from './channel-settings.js';
import type { DeliveryQueue } from './delivery-queue.js';
import { resolveTargets } from './routing.js';
import type { WriteBuffer } from './write-buffer.js';

export interface AlertingContext {
  readonly deps: AlertingServiceDeps;
  readonly now: () => number;
  readonly log: Logger;
  readonly channels: ChannelRegistry;
  readonly channelSettings: ChannelSettings;
  readonly writes: WriteBuffer;
  /** Alert state by monitor: all of them alone, the held shards' ones in a cluster. */
  readonly states: Map<string, AlertState>;
  readonly queue: DeliveryQueue;
  readonly shards: AlertShards | undefined;
  /** Per monitor: the write/enqueue still waiting for an enrichment; later ones of that monitor chain behind it. */
  readonly waiting: Map<string, Promise<void>>;
}

/** One queue entry per target channel of the alert (routing.ts), with the channel's recipients when it has some. */
export function toQueue(cx: AlertingContext, m: AlertMonitor, base: Alert): Array<{ channel: string; alert: Alert }> {
  return resolveTargets(m, base.kind, cx.channels, (id) => cx.channelSettings.active(id)).map((x) => ({
    channel: x.channel,
    alert: x.recipients ? { ...base, recipients: x.recipients } : base,
  }));
}
