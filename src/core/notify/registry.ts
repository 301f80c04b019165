/**
 * The notification channels, one line each. Adding a channel = one file in ./channels/ (a `defineChannel` declaration
 * exported as `<id>Channel`) + one line in CHANNELS below; alert targets, per-monitor fields, the /alerting routes,
 * OpenAPI, redaction and the dashboard's forms follow from it (docs/extending.md). `createChannelRegistry` binds the
 * declarations to a service's network and resource pool (no module state).
 */
import type { Logger } from 'pino';
import type { Alert, ChannelDefinition, ChannelNet, ChannelSettingsValues, ProbeResult } from './channel.js';
import { DEFAULT_SEND_TIMEOUT_MS, createChannelPool } from './channel-kit.js';
import { discordChannel } from './channels/discord.js';
import { emailChannel } from './channels/email.js';
import { googlechatChannel } from './channels/googlechat.js';
import { mattermostChannel } from './channels/mattermost.js';
import { ntfyChannel } from './channels/ntfy.js';
import { opsgenieChannel } from './channels/opsgenie.js';
import { pagerdutyChannel } from './channels/pagerduty.js';
import { pushoverChannel } from './channels/pushover.js';
import { slackChannel } from './channels/slack.js';
import { teamsChannel } from './channels/teams.js';
import { telegramChannel } from './channels/telegram.js';
import { webhookChannel } from './channels/webhook.js';

export const CHANNELS: readonly ChannelDefinition[] = [
  emailChannel,
  slackChannel,
  teamsChannel,
  pagerdutyChannel,
  webhookChannel,
  discordChannel,
  telegramChannel,
  ntfyChannel,
  opsgenieChannel,
  googlechatChannel,
  mattermostChannel,
  pushoverChannel,
];

export type ChannelRegistryDeps = Partial<ChannelNet>;

export interface CallContext {
  signal: AbortSignal;
  log: Logger;
  /** SendContext.deliveryId. */
  deliveryId?: string;
}

export interface ChannelRegistry {
  get(id: string): ChannelDefinition | undefined;
  has(id: string): boolean;
  ids(): string[];
  list(): readonly ChannelDefinition[];
  send(id: string, alert: Alert, settings: ChannelSettingsValues, ctx: CallContext): Promise<void>;
  /** undefined when the channel has no probe. */
  probe(id: string, settings: ChannelSettingsValues, ctx: CallContext): Promise<ProbeResult> | undefined;
  /** Releases pooled resources (SMTP connections). */
  close(): Promise<void>;
}

/** The channels bound to a network (a test CA, timeouts) and a resource pool; `list` defaults to every channel. */
export function createChannelRegistry(
  deps: ChannelRegistryDeps = {},
  list: readonly ChannelDefinition[] = CHANNELS,
): ChannelRegistry {
  const byId = new Map(list.map((c) => [c.id, c]));
  const net: ChannelNet = { timeoutMs: DEFAULT_SEND_TIMEOUT_MS, ...deps };
  const pool = createChannelPool();
  const must = (id: string): ChannelDefinition => {
    const c = byId.get(id);
    if (!c) throw new Error(`unknown channel ${id}`);
    return c;
  };
  return {
    get: (id) => byId.get(id),
    has: (id) => byId.has(id),
    ids: () => [...byId.keys()],
    list: () => list,
    send: (id, alert, settings, ctx) => must(id).send(alert, settings, { ...ctx, net, pool }),
    probe: (id, settings, ctx) => must(id).probe?.(settings, { ...ctx, net, pool }),
    async close() {
      pool.closeAll();
    },
  };
}
