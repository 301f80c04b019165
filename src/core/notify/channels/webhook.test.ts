import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildWebhookDocument, parseHeaderLines, renderWebhookBody, webhookChannel } from './webhook.js';

const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'shop', type: 'url', displayName: 'Shop', tags: ['prod'] },
  status: 'DOWN',
  previousStatus: 'OK',
  message: 'connect ECONNREFUSED "quoted"\nsecond line',
  responseTimeMs: 12.4,
  timestampMs: 1_700_000_000_000,
};
const SECRET = 'signing-key-123';

/** What a receiver does with the documented signature: HMAC-SHA256 of "<timestamp>.<raw body>", hex, constant-time. */
function verify(
  headers: Record<string, string | string[] | undefined>,
  raw: string,
  header = 'x-sentinel-signature',
): boolean {
  const ts = String(headers['x-sentinel-timestamp'] ?? '');
  const sig = String(headers[header] ?? '');
  const want = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${raw}`).digest('hex')}`;
  return /^\d+$/.test(ts) && sig.length === want.length && timingSafeEqual(Buffer.from(sig), Buffer.from(want));
}

describe('webhook channel', () => {
  const env = useReceiver({ status: 204 });

  it('without a template POSTs the versioned alert document as JSON', async () => {
    const ch = bindChannel(webhookChannel, env.tls);
    await ch.send(alert, { url: `${env.rx.url}/in?token=abc` });
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/in?token=abc');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body.version, 1);
    assert.equal(r.body.severity, 'critical');
    assert.equal(r.body.monitor.name, 'shop');
    assert.equal(r.body.time, '2023-11-14T22:13:20.000Z');
    assert.equal(r.headers['x-sentinel-signature'], undefined, 'no signature without hmacSecret');
    assert.deepEqual(r.body, buildWebhookDocument(alert));
  });

  it('method, extra headers, a JSON template with escaped fields, and an HMAC signature the receiver verifies', async () => {
    const ch = bindChannel(webhookChannel, env.tls);
    const bodyTemplate = '{"text": "{{title}}", "msg": "{{message}}", "sev": "{{severity}}", "doc": {{json}}}';
    await ch.send(alert, {
      url: `${env.rx.url}/put`,
      method: 'PUT',
      headers: 'Authorization: Bearer t0k\nX-Team: ops',
      bodyTemplate,
      hmacSecret: SECRET,
    });
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.method, 'PUT');
    assert.equal(r.headers.authorization, 'Bearer t0k');
    assert.equal(r.headers['x-team'], 'ops');
    assert.equal(r.body.text, '[DOWN] Shop (shop) is DOWN');
    assert.equal(r.body.msg, alert.message, 'quotes and newlines survive the template');
    assert.equal(r.body.sev, 'critical');
    assert.deepEqual(r.body.doc, buildWebhookDocument(alert));
    assert.ok(verify(r.headers, r.raw), 'signature verifies against the raw body');
    assert.ok(!verify(r.headers, `${r.raw} `), 'a changed body does not verify');
    await ch.send(alert, { url: `${env.rx.url}/x`, hmacSecret: SECRET, signatureHeader: 'X-Hub-Signature-256' });
    assert.ok(verify(env.rx.requests.at(-1)!.headers, env.rx.requests.at(-1)!.raw, 'x-hub-signature-256'));
  });

  it('a text template is filled without JSON escaping; acknowledgement fields are available', () => {
    const ack: Alert = { ...alert, kind: 'acknowledge', acknowledgement: { by: 'alice', atMs: 1, note: 'on it' } };
    assert.equal(
      renderWebhookBody(ack, '{{monitor.name}} {{kind}} by {{ack.by}}: {{ack.note}}', 'text/plain'),
      'shop acknowledge by alice: on it',
    );
    assert.ok(webhookChannel.kinds.includes('acknowledge'));
  });

  it('validates URL, headers, placeholders and that a JSON template gives JSON', () => {
    const v = (s: Parameters<NonNullable<typeof webhookChannel.validate>>[0]) => webhookChannel.validate!(s);
    assert.equal(v({ url: 'http://x' })?.field, 'url');
    assert.equal(v({ url: 'https://x', headers: 'no colon here' })?.field, 'headers');
    assert.equal(v({ url: 'https://x', headers: 'Content-Length: 5' })?.field, 'headers');
    assert.equal(v({ url: 'https://x', bodyTemplate: '{"a": "{{nope}}"}' })?.field, 'bodyTemplate');
    assert.equal(v({ url: 'https://x', bodyTemplate: '{"a": {{title}}}' })?.field, 'bodyTemplate');
    assert.equal(v({ url: 'https://x', bodyTemplate: '{{title}}', contentType: 'text/plain' }), undefined);
    assert.equal(v({ url: 'https://x', signatureHeader: 'bad header' })?.field, 'signatureHeader');
    assert.deepEqual(parseHeaderLines('A: 1\n\n B : two words '), { A: '1', B: 'two words' });
  });

  it('classifies answers: 5xx and 429 retryable, 4xx not; the URL and headers never appear in errors', async () => {
    const ch = bindChannel(webhookChannel, env.tls);
    env.rx.plan({ status: 503 }, { status: 429, headers: { 'retry-after': '2' } }, { status: 401, body: 'denied' });
    const s = { url: `${env.rx.url}/secret-path`, headers: 'Authorization: Bearer hidden' };
    const errs: ChannelError[] = [];
    for (let i = 0; i < 3; i++) errs.push(await failure(ch.send(alert, s)));
    assert.deepEqual(
      errs.map((e) => [e instanceof ChannelError, e.retryable, e.retryAfterMs]),
      [
        [true, true, undefined],
        [true, true, 2000],
        [true, false, undefined],
      ],
    );
    assert.ok(errs.every((e) => !/secret-path|hidden/.test(e.message)));
  });
});
