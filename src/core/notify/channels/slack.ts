/**
 * Slack through an incoming webhook (https://api.slack.com/messaging/webhooks): POST JSON with `text` (the
 * notification fallback) and `blocks` (Block Kit: header, section with fields, context). Slack answers 200 "ok";
 * 400/403/404/410 with an error word (not retryable), 429 with Retry-After, 5xx (retryable).
 */
import { Type } from '@sinclair/typebox';
import type { Alert, SendContext } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import { assertOk, invalidHttpsUrl, postJson } from '../http-post.js';
import { type ChannelDefinition, type WebhookChannelDeps, BoolString, DEFAULT_SEND_TIMEOUT_MS } from '../channel-kit.js';

export interface SlackSettings {
  enabled?: string;
  webhookUrl?: string;
}

/** Slack mrkdwn needs only &, < and > escaped. */
function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const EMOJI: Record<Alert['kind'], string> = { problem: ':red_circle:', recovery: ':large_green_circle:', test: ':information_source:' };

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
  const timeoutMs = deps.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  return {
    id: 'slack',
    settings: Type.Object(
      {
        enabled: Type.Optional(BoolString),
        webhookUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'Incoming webhook URL (secret)' })),
      },
      { additionalProperties: false },
    ),
    secretFields: ['webhookUrl'],
    requiredWhenEnabled: ['webhookUrl'],
    validate(s) {
      if (s.webhookUrl !== undefined && s.webhookUrl !== '') {
        const bad = invalidHttpsUrl(s.webhookUrl);
        if (bad) return { field: 'webhookUrl', message: `webhookUrl ${bad}` };
      }
      return undefined;
    },
    async send(alert: Alert, s: SlackSettings, ctx: SendContext): Promise<void> {
      const res = await postJson(s.webhookUrl ?? '', buildSlackPayload(alert), 'slack', {
        timeoutMs,
        signal: ctx.signal,
        agent: deps.agent,
      });
      assertOk(res, 'slack', Date.now());
    },
  };
}
