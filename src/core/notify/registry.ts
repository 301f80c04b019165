/**
 * The notification channels, one line each. Adding a channel = one file in ./channels/ + one line here.
 * A factory (no module state): the lead's composition root calls it once and passes the result around.
 */
import type { AnyChannel, WebhookChannelDeps } from './channel-kit.js';
import { type EmailChannelDeps, createEmailChannel } from './channels/email.js';
import { createPagerDutyChannel } from './channels/pagerduty.js';
import { createSlackChannel } from './channels/slack.js';
import { createTeamsChannel } from './channels/teams.js';

export interface ChannelRegistryDeps {
  webhook?: WebhookChannelDeps;
  email?: EmailChannelDeps;
}

export type ChannelRegistry = ReadonlyMap<string, AnyChannel>;

export function createChannelRegistry(deps: ChannelRegistryDeps = {}): ChannelRegistry {
  const channels: AnyChannel[] = [
    createEmailChannel(deps.email),
    createSlackChannel(deps.webhook),
    createTeamsChannel(deps.webhook),
    createPagerDutyChannel(deps.webhook),
  ];
  return new Map(channels.map((c) => [c.id, c]));
}

export const CHANNEL_IDS = ['email', 'slack', 'teams', 'pagerduty'] as const;
export type ChannelId = (typeof CHANNEL_IDS)[number];
