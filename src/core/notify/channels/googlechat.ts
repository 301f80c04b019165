/**
 * Google Chat through a space's incoming webhook (https://developers.google.com/workspace/chat/quickstart/webhooks):
 * POST JSON `{ text, cardsV2: [{ cardId, card: { header, sections: [{ widgets: [decoratedText…] }] } }] }`. With
 * `threadPerMonitor` 'true' (default) every alert of a monitor replies in one thread (`thread.threadKey` and
 * `messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD`). Google answers 200 with the message; 400 for a bad card,
 * 429 quota (retryable). Card text accepts a small HTML subset, so values are escaped.
 */
import type { Alert } from '../channel.js';
import { alertFacts, alertTitle, escapeMarkup, truncate } from '../alert-text.js';
import {
  BoolString,
  OptOut,
  defineChannel,
  sendJson,
  severityOf,
  validateWebhookUrl,
  webhookSettings,
} from '../channel-kit.js';

/** Colour of the status text. */
const SEVERITY = {
  MINOR: '#b38f00',
  MAJOR: '#e37400',
  CRITICAL: '#d93025',
  DOWN: '#d93025',
  ERROR: '#d93025',
  EXCEPTION: '#d93025',
  OK: '#188038',
  TEST: '#1a73e8',
} as const;

export function googleChatThreadKey(alert: Alert): string {
  return truncate(`sentinel-${alert.monitor.type}-${alert.monitor.name}`, 128);
}

/** The webhook body (pure). */
export function buildGoogleChatPayload(alert: Alert, threaded: boolean): Record<string, unknown> {
  const title = alertTitle(alert);
  const color = severityOf(alert, SEVERITY);
  const widgets: Record<string, unknown>[] = alertFacts(alert).map(([k, v]) => ({
    decoratedText: {
      topLabel: k,
      text: k === 'Status' ? `<font color="${color}"><b>${escapeMarkup(v)}</b></font>` : escapeMarkup(v),
      wrapText: true,
    },
  }));
  const sections: Record<string, unknown>[] = [{ widgets }];
  if (alert.message)
    sections.push({
      header: 'Message',
      widgets: [{ textParagraph: { text: escapeMarkup(truncate(alert.message, 3000)) } }],
    });
  return {
    text: truncate(title, 4000),
    cardsV2: [
      {
        cardId: `sentinel-${alert.kind}`,
        card: {
          header: { title: truncate(title, 200), subtitle: `Sentinel monitoring · ${alert.kind}` },
          sections,
        },
      },
    ],
    ...(threaded && alert.kind !== 'test' ? { thread: { threadKey: googleChatThreadKey(alert) } } : {}),
  };
}

/** The webhook URL with the reply option that makes threadKey work (pure). */
export function googleChatUrl(webhookUrl: string, threaded: boolean): string {
  if (!threaded) return webhookUrl;
  const u = new URL(webhookUrl);
  u.searchParams.set('messageReplyOption', 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
  return u.toString();
}

export const googlechatChannel = defineChannel({
  id: 'googlechat',
  displayName: 'Google Chat',
  description: 'A Google Chat space through an incoming webhook (cards v2, one thread per monitor)',
  docsUrl: 'https://developers.google.com/workspace/chat/quickstart/webhooks',
  settings: {
    ...webhookSettings('Space webhook URL (https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…)'),
    threadPerMonitor: { ...BoolString, description: "true (default): a monitor's alerts reply in one thread" },
  },
  requiredWhenEnabled: ['webhookUrl'],
  defaults: { threadPerMonitor: 'true' },
  example: {
    enabled: 'true',
    webhookUrl: 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=example-key&token=example-token',
  },
  endpoint: { kind: 'https', setting: 'webhookUrl' },
  ...OptOut('notifyGooglechat', 'Google Chat'),
  severity: SEVERITY,
  validate: validateWebhookUrl,
  async send(alert, s, ctx) {
    const threaded = s.threadPerMonitor !== 'false';
    const url = googleChatUrl(s.webhookUrl ?? '', threaded);
    await sendJson(ctx, 'googlechat', url, buildGoogleChatPayload(alert, threaded), {
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
  },
});
