/**
 * Mattermost and Rocket.Chat through their Slack-compatible incoming webhooks
 * (https://developers.mattermost.com/integrate/webhooks/incoming/, https://docs.rocket.chat/ "Integrations"):
 * POST JSON `{ text, username?, icon_url?, channel?, attachments: [{ fallback, color, title, text, fields: [{ title,
 * value, short }], footer, ts }] }` (the legacy Slack attachment format both accept; neither renders Block Kit).
 * Mattermost answers 200 "ok", Rocket.Chat 200 `{"success":true}`; 400/403/404 not retryable, 429/5xx retryable.
 */
import { Type } from '@sinclair/typebox';
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import { OptOut, checkHttpsUrls, defineChannel, sendJson, severityOf, webhookSettings } from '../channel-kit.js';

/** Attachment side colour. */
const SEVERITY = {
  MINOR: '#ffcc00',
  MAJOR: '#ff8000',
  CRITICAL: '#e01e5a',
  DOWN: '#e01e5a',
  ERROR: '#e01e5a',
  EXCEPTION: '#e01e5a',
  OK: '#2eb67d',
  TEST: '#36c5f0',
} as const;

/** The webhook body (pure). */
export function buildMattermostPayload(
  alert: Alert,
  opts: { username?: string; iconUrl?: string; channel?: string } = {},
): Record<string, unknown> {
  const title = alertTitle(alert);
  return {
    text: truncate(title, 4000),
    ...(opts.username ? { username: opts.username } : {}),
    ...(opts.iconUrl ? { icon_url: opts.iconUrl } : {}),
    ...(opts.channel ? { channel: opts.channel } : {}),
    attachments: [
      {
        fallback: truncate(title, 4000),
        color: severityOf(alert, SEVERITY),
        title: truncate(title, 250),
        ...(alert.message ? { text: truncate(alert.message, 3000) } : {}),
        fields: alertFacts(alert).map(([k, v]) => ({ title: k, value: truncate(v, 1000), short: true })),
        footer: `Sentinel monitoring · ${alert.kind}`,
        ts: Math.floor(alert.timestampMs / 1000),
      },
    ],
  };
}

export const mattermostChannel = defineChannel({
  id: 'mattermost',
  displayName: 'Mattermost / Rocket.Chat',
  description: 'Mattermost or Rocket.Chat through a Slack-compatible incoming webhook (message attachment)',
  docsUrl: 'https://developers.mattermost.com/integrate/webhooks/incoming/',
  settings: {
    ...webhookSettings('Incoming webhook URL (Mattermost /hooks/<key>, Rocket.Chat /hooks/<id>/<token>)'),
    username: Type.String({ maxLength: 64, description: 'post as this user name (if the server allows overrides)' }),
    iconUrl: Type.String({ maxLength: 2048, description: 'avatar URL (if the server allows overrides)' }),
    channel: Type.String({
      maxLength: 128,
      description: "channel override (e.g. town-square or #alerts); empty = the webhook's",
    }),
  },
  requiredWhenEnabled: ['webhookUrl'],
  example: {
    enabled: 'true',
    webhookUrl: 'https://mattermost.example.com/hooks/xxxgeneratedkeyxxx',
    username: 'sentinel',
  },
  endpoint: { kind: 'https', setting: 'webhookUrl' },
  ...OptOut('notifyMattermost', 'Mattermost / Rocket.Chat'),
  severity: SEVERITY,
  validate: (s) => checkHttpsUrls(s, ['webhookUrl', 'iconUrl']),
  async send(alert, s, ctx) {
    const body = buildMattermostPayload(alert, { username: s.username, iconUrl: s.iconUrl, channel: s.channel });
    await sendJson(ctx, 'mattermost', s.webhookUrl ?? '', body);
  },
});
