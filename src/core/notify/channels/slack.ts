/**
 * Slack through an incoming webhook (https://api.slack.com/messaging/webhooks): POST JSON with `text` (the
 * notification fallback) and `blocks` (Block Kit: header, section with fields, context). Slack answers 200 "ok";
 * 400/403/404/410 with an error word (not retryable), 429 with Retry-After, 5xx (retryable).
 */
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, escapeMarkup, truncate } from '../alert-text.js';
import { OptOut, defineChannel, sendJson, severityOf, validateWebhookUrl, webhookSettings } from '../channel-kit.js';

const SEVERITY = {
  MINOR: ':large_yellow_circle:',
  MAJOR: ':large_orange_circle:',
  CRITICAL: ':red_circle:',
  DOWN: ':red_circle:',
  ERROR: ':red_circle:',
  EXCEPTION: ':red_circle:',
  OK: ':large_green_circle:',
  TEST: ':information_source:',
} as const;

/** The webhook body (pure). Limits per Block Kit: header text 150 chars, ≤ 10 fields of ≤ 2000 chars, section 3000. */
export function buildSlackPayload(alert: Alert): Record<string, unknown> {
  const title = alertTitle(alert);
  const fields = alertFacts(alert)
    .slice(0, 10)
    .map(([k, v]) => ({ type: 'mrkdwn', text: truncate(`*${escapeMarkup(k)}*\n${escapeMarkup(v)}`, 2000) }));
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: true } },
    { type: 'section', fields },
  ];
  if (alert.message) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: truncate(escapeMarkup(alert.message), 3000) } });
  }
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: `${severityOf(alert, SEVERITY)} Sentinel monitoring · ${alert.kind}` }],
  });
  return { text: truncate(title, 3000), blocks };
}

export const slackChannel = defineChannel({
  id: 'slack',
  displayName: 'Slack',
  description: 'A Slack channel through an incoming webhook (Block Kit message)',
  docsUrl: 'https://api.slack.com/messaging/webhooks',
  settings: webhookSettings('Incoming webhook URL'),
  requiredWhenEnabled: ['webhookUrl'],
  example: { enabled: 'true', webhookUrl: 'https://hooks.slack.com/services/T000/B000/XXXXXXXX' },
  endpoint: { kind: 'https', setting: 'webhookUrl' },
  ...OptOut('notifySlack', 'the Slack channel'),
  severity: SEVERITY,
  validate: validateWebhookUrl,
  async send(alert, s, ctx) {
    await sendJson(ctx, 'slack', s.webhookUrl ?? '', buildSlackPayload(alert));
  },
});
