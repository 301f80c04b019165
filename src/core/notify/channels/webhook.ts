/**
 * A generic webhook: any method (POST, PUT, PATCH) to any https URL, extra headers, a body template with the alert's
 * fields, and an HMAC-SHA256 signature. With no template the body is the alert document (`buildWebhookDocument`,
 * `version: 1`). Placeholders `{{field}}` (list in WEBHOOK_FIELDS) are JSON-escaped when the content type is JSON, so
 * `{"text": "{{title}}"}` stays valid JSON whatever the monitor's message holds; `{{json}}` inserts the whole
 * document. With `hmacSecret` set, every request carries `X-Sentinel-Timestamp: <unix seconds>` and
 * `<signatureHeader>: sha256=<hex HMAC-SHA256(hmacSecret, "<timestamp>.<body>")>` (docs/alerting.md shows the check).
 * Every queued alert carries `Idempotency-Key: <delivery id>`, the same on each resend of that delivery.
 */
import { createHmac } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { type Alert, type ChannelSettingsValues, ChannelError } from '../channel.js';
import { alertTitle } from '../alert-text.js';
import { OptOut, Secret, checkHttpsUrls, defineChannel, request, severityOf } from '../channel-kit.js';
import { assertOk } from '../http-post.js';

const SEVERITY = {
  MINOR: 'warning',
  MAJOR: 'error',
  CRITICAL: 'critical',
  DOWN: 'critical',
  ERROR: 'error',
  EXCEPTION: 'error',
  OK: 'ok',
  TEST: 'info',
} as const;

export const DEFAULT_SIGNATURE_HEADER = 'X-Sentinel-Signature';
export const TIMESTAMP_HEADER = 'X-Sentinel-Timestamp';
/** The same value on every resend of one queued delivery (SendContext.deliveryId). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const TOKEN_RE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'content-type']);
const PLACEHOLDER_RE = /\{\{\s*([A-Za-z.]+)\s*\}\}/g;

/** The alert as the webhook's JSON document (pure). */
export function buildWebhookDocument(alert: Alert): Record<string, unknown> {
  const m = alert.monitor;
  return {
    version: 1,
    kind: alert.kind,
    status: alert.status,
    ...(alert.previousStatus ? { previousStatus: alert.previousStatus } : {}),
    severity: severityOf(alert, SEVERITY),
    title: alertTitle(alert),
    ...(alert.message ? { message: alert.message } : {}),
    monitor: {
      name: m.name,
      type: m.type,
      ...(m.displayName ? { displayName: m.displayName } : {}),
      ...(m.probe ? { probe: m.probe } : {}),
      ...(m.location ? { location: m.location } : {}),
      tags: m.tags ?? [],
    },
    ...(alert.responseTimeMs !== undefined ? { responseTimeMs: alert.responseTimeMs } : {}),
    timestampMs: alert.timestampMs,
    time: new Date(alert.timestampMs).toISOString(),
    ...(alert.acknowledgement ? { acknowledgement: alert.acknowledgement } : {}),
  };
}

/** Template placeholders and their values. */
export const WEBHOOK_FIELDS: Readonly<Record<string, (a: Alert) => string>> = {
  kind: (a) => a.kind,
  status: (a) => a.status,
  previousStatus: (a) => a.previousStatus ?? '',
  severity: (a) => severityOf(a, SEVERITY),
  title: (a) => alertTitle(a),
  message: (a) => a.message ?? '',
  'monitor.name': (a) => a.monitor.name,
  'monitor.type': (a) => a.monitor.type,
  'monitor.displayName': (a) => a.monitor.displayName ?? a.monitor.name,
  'monitor.probe': (a) => a.monitor.probe ?? '',
  'monitor.location': (a) => a.monitor.location ?? '',
  'monitor.tags': (a) => (a.monitor.tags ?? []).join(','),
  responseTimeMs: (a) => (a.responseTimeMs === undefined ? '' : String(Math.round(a.responseTimeMs))),
  timestampMs: (a) => String(a.timestampMs),
  time: (a) => new Date(a.timestampMs).toISOString(),
  'ack.by': (a) => a.acknowledgement?.by ?? '',
  'ack.note': (a) => a.acknowledgement?.note ?? '',
  json: (a) => JSON.stringify(buildWebhookDocument(a)),
};

const isJson = (contentType: string): boolean => /[/+]json\b/i.test(contentType);

/** The request body (pure): the template with its placeholders filled, or the JSON document. */
export function renderWebhookBody(alert: Alert, template: string | undefined, contentType: string): string {
  if (!template) return JSON.stringify(buildWebhookDocument(alert));
  const json = isJson(contentType);
  return template.replace(PLACEHOLDER_RE, (_, name: string) => {
    const value = WEBHOOK_FIELDS[name]?.(alert) ?? '';
    return json && name !== 'json' ? JSON.stringify(value).slice(1, -1) : value;
  });
}

/** "Name: value" lines → headers; throws a message naming the bad line. */
export function parseHeaderLines(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, raw] of (text ?? '').split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(':');
    const name = at > 0 ? line.slice(0, at).trim() : '';
    if (!TOKEN_RE.test(name)) throw new Error(`line ${i + 1} must look like "Name: value"`);
    if (RESERVED_HEADERS.has(name.toLowerCase())) throw new Error(`line ${i + 1}: ${name} is set by Sentinel`);
    out[name] = line.slice(at + 1).trim();
  }
  return out;
}

/** The signature header value for a body sent at `timestampS` (pure). */
export function webhookSignature(secret: string, timestampS: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex')}`;
}

const SAMPLE: Alert = {
  kind: 'problem',
  monitor: { name: 'sample "x"', type: 'url', tags: ['a'] },
  status: 'DOWN',
  message: 'a "quoted" \\ message\nwith a newline',
  timestampMs: 0,
  acknowledgement: { by: 'u', atMs: 0, note: '"n"' },
};

function validate(s: ChannelSettingsValues): { field: string; message: string } | undefined {
  const url = checkHttpsUrls(s, ['url']);
  if (url) return url;
  try {
    parseHeaderLines(s.headers);
  } catch (e) {
    return { field: 'headers', message: `headers: ${(e as Error).message}` };
  }
  if (s.signatureHeader && !TOKEN_RE.test(s.signatureHeader))
    return { field: 'signatureHeader', message: 'signatureHeader must be a header name' };
  const tpl = s.bodyTemplate ?? '';
  for (const m of tpl.matchAll(PLACEHOLDER_RE))
    if (!WEBHOOK_FIELDS[m[1]!])
      return {
        field: 'bodyTemplate',
        message: `unknown placeholder {{${m[1]}}}; fields: ${Object.keys(WEBHOOK_FIELDS).join(', ')}`,
      };
  if (tpl && isJson(s.contentType || 'application/json')) {
    try {
      JSON.parse(renderWebhookBody(SAMPLE, tpl, 'application/json'));
    } catch {
      return { field: 'bodyTemplate', message: 'bodyTemplate must give valid JSON for a JSON content type' };
    }
  }
  return undefined;
}

export const webhookChannel = defineChannel({
  id: 'webhook',
  displayName: 'Webhook',
  description: 'Any HTTPS endpoint: method, headers, a body template with the alert fields, HMAC-SHA256 signature',
  docsUrl: 'docs/alerting.md#webhook',
  settings: {
    url: Secret(Type.String({ maxLength: 2048, description: 'https URL to call (secret: it often carries a token)' })),
    method: Type.Union([Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH')], {
      description: 'HTTP method (default POST)',
    }),
    headers: Secret(
      Type.String({
        maxLength: 4096,
        description: 'extra headers, one "Name: value" per line (secret: may hold auth)',
      }),
    ),
    contentType: Type.String({
      maxLength: 128,
      pattern: '^[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+(\\s*;[^\\r\\n]*)?$',
      description: 'Content-Type of the body (default application/json)',
    }),
    bodyTemplate: Type.String({
      maxLength: 16_384,
      description: `body with {{field}} placeholders (${Object.keys(WEBHOOK_FIELDS).join(', ')}); empty = the JSON alert document`,
    }),
    hmacSecret: Secret(Type.String({ maxLength: 256, description: 'key of the HMAC-SHA256 signature (secret)' })),
    signatureHeader: Type.String({
      maxLength: 64,
      description: `header carrying "sha256=<hex>" (default ${DEFAULT_SIGNATURE_HEADER})`,
    }),
  },
  requiredWhenEnabled: ['url'],
  defaults: { method: 'POST', contentType: 'application/json', signatureHeader: DEFAULT_SIGNATURE_HEADER },
  example: {
    enabled: 'true',
    url: 'https://hooks.example.com/sentinel',
    method: 'POST',
    headers: 'Authorization: Bearer example-token',
    hmacSecret: 'example-signing-key',
  },
  endpoint: { kind: 'https', setting: 'url' },
  ...OptOut('notifyWebhook', 'the webhook'),
  severity: SEVERITY,
  kinds: ['problem', 'recovery', 'test', 'acknowledge'],
  validate,
  async send(alert, s, ctx) {
    const contentType = s.contentType || 'application/json';
    const body = renderWebhookBody(alert, s.bodyTemplate, contentType);
    let extra: Record<string, string>;
    try {
      extra = parseHeaderLines(s.headers);
    } catch (e) {
      throw new ChannelError(`webhook: headers ${(e as Error).message}`, false);
    }
    const headers: Record<string, string> = { ...extra, 'content-type': contentType };
    // The same key on every resend of one delivery (decision 157); an extra header of that name wins.
    const own = Object.keys(extra).some((k) => k.toLowerCase() === IDEMPOTENCY_HEADER.toLowerCase());
    if (ctx.deliveryId && !own) headers[IDEMPOTENCY_HEADER] = ctx.deliveryId;
    if (s.hmacSecret) {
      const ts = Math.floor(Date.now() / 1000);
      headers[TIMESTAMP_HEADER] = String(ts);
      headers[s.signatureHeader || DEFAULT_SIGNATURE_HEADER] = webhookSignature(s.hmacSecret, ts, body);
    }
    const res = await request(ctx, 'webhook', s.url ?? '', body, { method: s.method || 'POST', headers });
    assertOk(res, 'webhook', Date.now());
  },
});
