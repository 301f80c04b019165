/**
 * Slack through an incoming webhook (https://api.slack.com/messaging/webhooks): POST JSON with `text` (the
 * notification fallback) and `blocks` (Block Kit: header, section with fields, context). Slack answers 200 "ok";
 * 400/403/404/410 with an error word (not retryable), 429 with Retry-After, 5xx (retryable).
 */
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import { type ChannelDefinition, type WebhookChannelDeps, createWebhookChannel } from '../channel-kit.js';
import type { WebhookSettings } from '../channel-kit.js';

export type SlackSettings = WebhookSettings;

/** Slack mrkdwn needs only &, < and > escaped. */
function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const EMOJI: Record<Alert['kind'], string> = {
  problem: ':red_circle:',
  recovery: ':large_green_circle:',
  test: ':information_source:',
};

/** The webhook body (pure). Limits per Block Kit: header text 150 chars, ≤ 10 fields of ≤ 2000 chars, section 3000. */
export function buildSlackPayload(alert: Alert): Record<string, unknown> {
  const title = alertTitle(alert);
  const fields = alertFacts(alert)
    .slice(0, 10)
    .map(([k, v]) => ({ type: 'mrkdwn', text: truncate(`*${esc(k)}*\n${esc(v)}`, 2000) }));
  const blocks: Record<string, unknown>[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: true } },
    { type: 'section', fields },
  ];
  if (alert.message) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: truncate(esc(alert.message), 3000) } });
  }
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: `${EMOJI[alert.kind]} Sentinel monitoring · ${alert.kind}` }],
  });
  return { text: truncate(title, 3000), blocks };
}

export function createSlackChannel(deps: WebhookChannelDeps = {}): ChannelDefinition<SlackSettings> {
  return createWebhookChannel(
    'slack',
    { urlDescription: 'Incoming webhook URL (secret)', maxUrlLength: 2048, build: buildSlackPayload },
    deps,
  );
}
