/**
 * Microsoft Teams through an incoming webhook or a Workflows "post to a channel when a webhook request is received"
 * URL. Body per Microsoft's documented format (learn.microsoft.com, "Create and send messages" / Adaptive Cards):
 * `{ type: 'message', attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null,
 * content: { $schema, type: 'AdaptiveCard', version, body: [...] } }] }`. Workflows answer 202, legacy webhooks 200.
 */
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import { OptOut, defineChannel, sendJson, severityOf, validateWebhookUrl, webhookSettings } from '../channel-kit.js';

export const ADAPTIVE_CARD_SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';
/** 1.4 is rendered by Teams desktop, web and mobile and accepted by Workflows. */
export const ADAPTIVE_CARD_VERSION = '1.4';

/** Adaptive Card TextBlock colours. */
const SEVERITY = {
  MINOR: 'Warning',
  MAJOR: 'Warning',
  CRITICAL: 'Attention',
  DOWN: 'Attention',
  ERROR: 'Attention',
  EXCEPTION: 'Attention',
  OK: 'Good',
  TEST: 'Accent',
} as const;

/** The webhook body (pure). */
export function buildTeamsPayload(alert: Alert): Record<string, unknown> {
  const body: Record<string, unknown>[] = [
    {
      type: 'TextBlock',
      text: truncate(alertTitle(alert), 300),
      size: 'Large',
      weight: 'Bolder',
      color: severityOf(alert, SEVERITY),
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

export const teamsChannel = defineChannel({
  id: 'teams',
  displayName: 'Microsoft Teams',
  description: 'A Teams channel through an incoming webhook or a Workflows URL (Adaptive Card 1.4)',
  docsUrl:
    'https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook',
  settings: webhookSettings('Incoming webhook or Workflows URL', 4096),
  requiredWhenEnabled: ['webhookUrl'],
  example: { enabled: 'true', webhookUrl: 'https://prod-00.westeurope.logic.azure.com/workflows/abc/triggers/manual' },
  endpoint: { kind: 'https', setting: 'webhookUrl' },
  ...OptOut('notifyTeams', 'the Microsoft Teams channel'),
  severity: SEVERITY,
  validate: validateWebhookUrl,
  async send(alert, s, ctx) {
    await sendJson(ctx, 'teams', s.webhookUrl ?? '', buildTeamsPayload(alert));
  },
});
