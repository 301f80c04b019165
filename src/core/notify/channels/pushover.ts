/**
 * Pushover (https://pushover.net/api): POST `<apiUrl>/1/messages.json` as application/x-www-form-urlencoded with
 * `token` (the application's API token), `user` (a user or group key), `message`, `title`, `priority`, `timestamp`
 * and optionally `device` and `sound`. Pushover answers 200 `{status: 1, request}`; 4xx `{status: 0, errors: [...]}`
 * (not retryable: fix the keys), 429 over the monthly quota, 5xx (retryable). `apiUrl` is overridable (tests).
 * Probe: POST /1/users/validate.json (the keys and the device are valid); nothing is pushed.
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
  sendForm,
  severityOf,
  timedProbe,
} from '../channel-kit.js';

export const PUSHOVER_API_URL = 'https://api.pushover.net';

/** Pushover priority: -1 quiet, 0 normal, 1 high (bypasses quiet hours). 2 (emergency) is not used. */
const SEVERITY = {
  MINOR: '0',
  MAJOR: '0',
  CRITICAL: '1',
  DOWN: '1',
  ERROR: '0',
  EXCEPTION: '0',
  OK: '-1',
  TEST: '0',
} as const;

/** The form fields of one message, keys apart (pure). message ≤ 1024, title ≤ 250 characters. */
export function buildPushoverMessage(alert: Alert, s: ChannelSettingsValues = {}): Record<string, string> {
  const lines = alertFacts(alert)
    .filter(([k]) => k !== 'Time')
    .map(([k, v]) => `${k}: ${v}`);
  if (alert.message) lines.unshift(alert.message, '');
  return {
    title: truncate(alertTitle(alert), 250),
    message: truncate(lines.join('\n'), 1024),
    priority: severityOf(alert, SEVERITY),
    timestamp: String(Math.floor(alert.timestampMs / 1000)),
    ...(s.device ? { device: s.device } : {}),
    ...(s.sound ? { sound: s.sound } : {}),
  };
}

const KEY = '^[A-Za-z0-9]{30}$';

export const pushoverChannel = defineChannel({
  id: 'pushover',
  displayName: 'Pushover',
  description: 'Push notifications to Pushover users or groups',
  docsUrl: 'https://pushover.net/api',
  settings: {
    appToken: Secret(Type.String({ pattern: KEY, description: "the application's API token, 30 characters (secret)" })),
    userKey: Secret(Type.String({ pattern: KEY, description: 'user or group key, 30 characters (secret)' })),
    device: Type.String({
      pattern: '^[A-Za-z0-9_-]{1,25}(,[A-Za-z0-9_-]{1,25})*$',
      description: "device name(s); empty = all the user's devices",
    }),
    sound: Type.String({
      pattern: '^[a-z0-9_-]{1,32}$',
      description: 'notification sound (pushover, siren, …); empty = the user default',
    }),
    apiUrl: Type.String({ maxLength: 2048, description: `API base URL, default ${PUSHOVER_API_URL}` }),
  },
  requiredWhenEnabled: ['appToken', 'userKey'],
  defaults: { apiUrl: PUSHOVER_API_URL },
  example: {
    enabled: 'true',
    appToken: 'azGDORePK8gMaC0QOYAMyEEuzJnyUi',
    userKey: 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG',
    sound: 'siren',
  },
  endpoint: { kind: 'https', setting: 'apiUrl' },
  ...OptOut('notifyPushover', 'Pushover'),
  severity: SEVERITY,
  validate: (s) => checkHttpsUrls(s, ['apiUrl']),
  async send(alert, s, ctx) {
    const url = joinUrl(s.apiUrl || PUSHOVER_API_URL, '/1/messages.json');
    await sendForm(ctx, 'pushover', url, {
      token: s.appToken ?? '',
      user: s.userKey ?? '',
      ...buildPushoverMessage(alert, s),
    });
  },
  probeDescription: 'validates the API token, the user key and the device; nothing is pushed',
  probe: (s, ctx) =>
    timedProbe(async () => {
      const url = joinUrl(s.apiUrl || PUSHOVER_API_URL, '/1/users/validate.json');
      const res = await sendForm(ctx, 'pushover', url, {
        token: s.appToken ?? '',
        user: s.userKey ?? '',
        ...(s.device ? { device: s.device } : {}),
      });
      const r = JSON.parse(res.body || '{}') as { devices?: string[] };
      return `valid; devices: ${(r.devices ?? []).join(', ') || 'none listed'}`;
    }),
});
