/**
 * Telegram through the Bot API (https://core.telegram.org/bots/api#sendmessage): POST
 * `<apiUrl>/bot<botToken>/sendMessage` with JSON `{ chat_id, text, parse_mode: 'HTML', message_thread_id?,
 * link_preview_options }`. The bot must be a member of the chat; `threadId` posts into a forum topic. Telegram answers
 * `{ok: true}`; `{ok: false, error_code, description}` otherwise, 429 with `parameters.retry_after` (seconds).
 * `apiUrl` is overridable (a local Bot API server; tests). The token is in the URL path and never in an error.
 * Probe: getMe (the token) and getChat (the bot can see the chat); nothing is posted.
 */
import { Type } from '@sinclair/typebox';
import { type Alert, ChannelError, type ChannelSettingsValues, type SendContext } from '../channel.js';
import { alertFacts, alertTitle, escapeMarkup, truncate } from '../alert-text.js';
import {
  OptOut,
  Secret,
  checkHttpsUrls,
  defineChannel,
  joinUrl,
  request,
  severityOf,
  timedProbe,
} from '../channel-kit.js';
import { assertOk, parseRetryAfter } from '../http-post.js';

export const TELEGRAM_API_URL = 'https://api.telegram.org';

/** Emoji in front of the title. */
const SEVERITY = {
  MINOR: '🟡',
  MAJOR: '🟠',
  CRITICAL: '🔴',
  DOWN: '🔴',
  ERROR: '🔴',
  EXCEPTION: '🔴',
  OK: '🟢',
  TEST: 'ℹ️',
} as const;

/** The sendMessage body (pure). Text ≤ 4096 characters. */
export function buildTelegramMessage(alert: Alert, chatId: string, threadId?: string): Record<string, unknown> {
  const lines = [`${severityOf(alert, SEVERITY)} <b>${escapeMarkup(alertTitle(alert))}</b>`, ''];
  for (const [k, v] of alertFacts(alert)) lines.push(`<b>${escapeMarkup(k)}:</b> ${escapeMarkup(v)}`);
  if (alert.message) lines.push('', `<pre>${escapeMarkup(truncate(alert.message, 2500))}</pre>`);
  return {
    chat_id: chatId,
    text: lines.join('\n'),
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
    ...(threadId ? { message_thread_id: Number(threadId) } : {}),
  };
}

async function call(ctx: SendContext, s: ChannelSettingsValues, method: string, body?: unknown): Promise<unknown> {
  const url = joinUrl(s.apiUrl || TELEGRAM_API_URL, `/bot${s.botToken ?? ''}/${method}`);
  const res = await request(ctx, 'telegram', url, body === undefined ? undefined : JSON.stringify(body), {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
  });
  let parsed: { ok?: boolean; description?: string; result?: unknown; parameters?: { retry_after?: number } } = {};
  try {
    parsed = JSON.parse(res.body) as typeof parsed;
  } catch {
    /* not JSON: judged by the status below */
  }
  if (res.status === 429) {
    const after = parsed.parameters?.retry_after;
    const ms = after !== undefined ? Math.min(after * 1000, 3_600_000) : parseRetryAfter(res.headers['retry-after'], 0);
    throw new ChannelError(`telegram: HTTP 429 ${parsed.description ?? 'Too Many Requests'}`, true, ms);
  }
  if (res.status >= 200 && res.status < 300 && parsed.ok === false)
    throw new ChannelError(`telegram: ${parsed.description ?? 'not ok'}`, false);
  if (res.status === 401 || res.status === 404)
    throw new ChannelError(`telegram: HTTP ${res.status} bad bot token`, false);
  assertOk(res, 'telegram', Date.now());
  return parsed.result;
}

export const telegramChannel = defineChannel({
  id: 'telegram',
  displayName: 'Telegram',
  description: 'A Telegram chat, group or forum topic through a bot (Bot API sendMessage)',
  docsUrl: 'https://core.telegram.org/bots/api#sendmessage',
  settings: {
    botToken: Secret(
      Type.String({
        maxLength: 128,
        pattern: '^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$',
        description: 'bot token from @BotFather (secret)',
      }),
    ),
    chatId: Type.String({
      maxLength: 64,
      pattern: '^(-?[0-9]{1,20}|@[A-Za-z0-9_]{4,64})$',
      description: 'chat id (e.g. -1001234567890) or @channelusername',
    }),
    threadId: Type.String({
      pattern: '^[0-9]{1,20}$',
      description: 'forum topic (message_thread_id); empty = main chat',
    }),
    apiUrl: Type.String({ maxLength: 2048, description: `Bot API base URL, default ${TELEGRAM_API_URL}` }),
  },
  requiredWhenEnabled: ['botToken', 'chatId'],
  defaults: { apiUrl: TELEGRAM_API_URL },
  example: {
    enabled: 'true',
    botToken: '123456789:AAExampleExampleExampleExample1234',
    chatId: '-1001234567890',
    threadId: '42',
  },
  endpoint: { kind: 'https', setting: 'apiUrl' },
  ...OptOut('notifyTelegram', 'Telegram'),
  severity: SEVERITY,
  validate: (s) => checkHttpsUrls(s, ['apiUrl']),
  async send(alert, s, ctx) {
    await call(ctx, s, 'sendMessage', buildTelegramMessage(alert, s.chatId ?? '', s.threadId));
  },
  probeDescription: 'getMe and getChat: the token works and the bot sees the chat; nothing is posted',
  probe: (s, ctx) =>
    timedProbe(async () => {
      const me = (await call(ctx, s, 'getMe')) as { username?: string } | undefined;
      const chat = (await call(ctx, s, 'getChat', { chat_id: s.chatId })) as { title?: string; type?: string };
      return `bot @${me?.username ?? '?'} sees ${chat?.type ?? 'chat'} ${chat?.title ?? s.chatId}`;
    }),
});
