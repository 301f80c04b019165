/**
 * Discord through a channel webhook (https://discord.com/developers/docs/resources/webhook#execute-webhook):
 * POST JSON `{ username, content, embeds: [{ title, description, color, fields, timestamp, footer }],
 * allowed_mentions: { parse: [] } }` (no @everyone from a monitor's message). Discord answers 204 (200 with
 * ?wait=true); 429 with Retry-After; 400 for a malformed embed. Limits: title 256, description 4096, 25 fields of
 * name 256 / value 1024, 6000 characters per message in total. Probe: GET on the webhook URL returns the webhook's
 * name and channel without posting.
 */
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import {
  OptOut,
  defineChannel,
  request,
  sendJson,
  severityOf,
  timedProbe,
  validateWebhookUrl,
  webhookSettings,
} from '../channel-kit.js';
import { assertOk } from '../http-post.js';

/** Embed side colour (decimal RGB). */
const SEVERITY = {
  MINOR: '16763904', // #FFCC00
  MAJOR: '16744448', // #FF8000
  CRITICAL: '14684511', // #E01E5F
  DOWN: '14684511',
  ERROR: '14684511',
  EXCEPTION: '14684511',
  OK: '3066993', // #2ECC71
  TEST: '3447003', // #3498DB
} as const;

/** The webhook body (pure). */
export function buildDiscordPayload(alert: Alert): Record<string, unknown> {
  const title = truncate(alertTitle(alert), 256);
  const fields = alertFacts(alert)
    .slice(0, 25)
    .map(([name, value]) => ({ name: truncate(name, 256), value: truncate(value || '-', 1024), inline: true }));
  const description = alert.message ? truncate(alert.message, 2000) : undefined;
  return {
    username: 'Sentinel',
    allowed_mentions: { parse: [] },
    embeds: [
      {
        title,
        ...(description ? { description } : {}),
        color: Number(severityOf(alert, SEVERITY)),
        fields,
        timestamp: new Date(alert.timestampMs).toISOString(),
        footer: { text: `Sentinel monitoring · ${alert.kind}` },
      },
    ],
  };
}

export const discordChannel = defineChannel({
  id: 'discord',
  displayName: 'Discord',
  description: 'A Discord channel through a webhook (one embed per alert)',
  docsUrl: 'https://discord.com/developers/docs/resources/webhook#execute-webhook',
  settings: webhookSettings('Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>)'),
  requiredWhenEnabled: ['webhookUrl'],
  example: { enabled: 'true', webhookUrl: 'https://discord.com/api/webhooks/123456789012345678/token' },
  endpoint: { kind: 'https', setting: 'webhookUrl' },
  ...OptOut('notifyDiscord', 'Discord'),
  severity: SEVERITY,
  validate: validateWebhookUrl,
  async send(alert, s, ctx) {
    await sendJson(ctx, 'discord', s.webhookUrl ?? '', buildDiscordPayload(alert));
  },
  probeDescription: 'reads the webhook (GET): its name and channel, nothing is posted',
  probe: (s, ctx) =>
    timedProbe(async () => {
      const res = await request(ctx, 'discord', s.webhookUrl ?? '', undefined, { method: 'GET' });
      assertOk(res, 'discord', Date.now());
      const w = JSON.parse(res.body || '{}') as { name?: string; channel_id?: string };
      return `webhook ${w.name ?? '?'} in channel ${w.channel_id ?? '?'}`;
    }),
});
