/**
 * ntfy (https://docs.ntfy.sh/publish/): POST `<serverUrl>/<topic>` with the message as a text/plain body and the
 * headers `Title` (RFC 2047 encoded when not ASCII), `Priority` (1-5, from the severity) and `Tags` (emoji short
 * codes, then the status and monitor type). Auth: an access token (`Authorization: Bearer tk_...`) or a user name and
 * password (Basic), or none for an open topic. ntfy answers 200 with the message JSON; 401/403 bad auth, 429 rate
 * limit. Probe: GET `<serverUrl>/<topic>/auth` (ntfy's "can I publish here" check); nothing is published.
 */
import { Type } from '@sinclair/typebox';
import type { Alert, ChannelSettingsValues } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
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
import { assertOk } from '../http-post.js';

export const NTFY_URL = 'https://ntfy.sh';

/** ntfy priority: 5 max/urgent, 4 high, 3 default, 2 low, 1 min. */
const SEVERITY = {
  MINOR: '3',
  MAJOR: '4',
  CRITICAL: '5',
  DOWN: '5',
  ERROR: '4',
  EXCEPTION: '4',
  OK: '3',
  TEST: '2',
} as const;

const EMOJI: Record<Alert['kind'], string> = {
  problem: 'rotating_light',
  recovery: 'white_check_mark',
  test: 'information_source',
  acknowledge: 'eyes',
};

/** RFC 2047 encoded-word for header values that are not printable ASCII. */
export function headerText(value: string): string {
  const flat = value.replace(/[\r\n]+/g, ' ');
  return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

/** The publish request (pure): text body and headers (auth apart). */
export function buildNtfyRequest(alert: Alert): { body: string; headers: Record<string, string> } {
  const lines = alertFacts(alert).map(([k, v]) => `${k}: ${v}`);
  if (alert.message) lines.push('', truncate(alert.message, 3000));
  const tags = [EMOJI[alert.kind], alert.status, alert.monitor.type].map((t) => t.replace(/[^A-Za-z0-9_-]/g, ''));
  return {
    body: lines.join('\n'),
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      Title: headerText(truncate(alertTitle(alert), 250)),
      Priority: severityOf(alert, SEVERITY),
      Tags: tags.filter(Boolean).join(','),
    },
  };
}

function authHeader(s: ChannelSettingsValues): Record<string, string> {
  if (s.accessToken) return { authorization: `Bearer ${s.accessToken}` };
  if (s.username)
    return {
      authorization: `Basic ${Buffer.from(`${s.username}:${s.password ?? ''}`, 'utf8').toString('base64')}`,
    };
  return {};
}

const topicUrl = (s: ChannelSettingsValues): string =>
  joinUrl(s.serverUrl || NTFY_URL, `/${encodeURIComponent(s.topic ?? '')}`);

export const ntfyChannel = defineChannel({
  id: 'ntfy',
  displayName: 'ntfy',
  description: 'Push notifications to phones and desktops through an ntfy topic (ntfy.sh or self-hosted)',
  docsUrl: 'https://docs.ntfy.sh/publish/',
  settings: {
    serverUrl: Type.String({ maxLength: 2048, description: `ntfy server, default ${NTFY_URL}` }),
    topic: Secret(
      Type.String({
        pattern: '^[-_A-Za-z0-9]{1,64}$',
        description: 'topic name (secret: on a public server the topic name is the password)',
      }),
    ),
    accessToken: Secret(Type.String({ maxLength: 256, description: 'access token tk_... (secret)' })),
    username: Type.String({ maxLength: 128, description: 'user name for Basic auth (when no access token)' }),
    password: Secret(Type.String({ maxLength: 256, description: 'password for Basic auth (secret)' })),
  },
  requiredWhenEnabled: ['topic'],
  defaults: { serverUrl: NTFY_URL },
  example: { enabled: 'true', serverUrl: NTFY_URL, topic: 'sentinel-alerts-7f3k9', accessToken: 'tk_exampletoken' },
  endpoint: { kind: 'https', setting: 'serverUrl' },
  ...OptOut('notifyNtfy', 'ntfy'),
  severity: SEVERITY,
  validate: (s) =>
    checkHttpsUrls(s, ['serverUrl']) ??
    (s.password && !s.username ? { field: 'username', message: 'username is required with a password' } : undefined),
  async send(alert, s, ctx) {
    const r = buildNtfyRequest(alert);
    const res = await request(ctx, 'ntfy', topicUrl(s), r.body, { headers: { ...r.headers, ...authHeader(s) } });
    assertOk(res, 'ntfy', Date.now());
  },
  probeDescription: 'asks the server whether these credentials may publish to the topic; nothing is published',
  probe: (s, ctx) =>
    timedProbe(async () => {
      const res = await request(ctx, 'ntfy', `${topicUrl(s)}/auth`, undefined, {
        method: 'GET',
        headers: authHeader(s),
      });
      assertOk(res, 'ntfy', Date.now());
      return 'may publish to the topic';
    }),
});
