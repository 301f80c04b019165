/**
 * Microsoft Teams through an incoming webhook or a Workflows "post to a channel when a webhook request is received"
 * URL. Body per Microsoft's documented format (learn.microsoft.com, "Create and send messages" / Adaptive Cards):
 * `{ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null,
 * content: { $schema, type: 'AdaptiveCard', version, body: [...] } }] }`. Workflows answer 202, legacy webhooks 200.
 */
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import { type ChannelDefinition, type WebhookChannelDeps, createWebhookChannel } from '../channel-kit.js';
import type { WebhookSettings } from '../channel-kit.js';

export type TeamsSettings = WebhookSettings;

export const ADAPTIVE_CARD_SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';
/** 1.4 is rendered by Teams desktop, web and mobile and accepted by Workflows. */
export const ADAPTIVE_CARD_VERSION = '1.4';

const COLOR: Record<Alert['kind'], string> = { problem: 'Attention', recovery: 'Good', test: 'Accent' };

/** The webhook body (pure). */
export function buildTeamsPayload(alert: Alert): Record<string, unknown> {
  const body: Record<string, unknown>[] = [
    {
      type: 'TextBlock',
      text: truncate(alertTitle(alert), 300),
      size: 'Large',
      weight: 'Bolder',
      color: COLOR[alert.kind],
      wrap: true,
    },
    { type: 'FactSet', facts: alertFacts(alert).map(([title, value]) => ({ title, value })) },
  ];
  if (alert.message) body.push({ type: 'TextBlock', text: truncate(alert.message, 2000), wrap: true });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: { $schema: ADAPTIVE_CARD_SCHEMA, type: 'AdaptiveCard', version: ADAPTIVE_CARD_VERSION, body },
      },
    ],
  };
}

export function createTeamsChannel(deps: WebhookChannelDeps = {}): ChannelDefinition<TeamsSettings> {
  return createWebhookChannel(
    'teams',
    { urlDescription: 'Incoming webhook or Workflows URL (secret)', maxUrlLength: 4096, build: buildTeamsPayload },
    deps,
  );
}
