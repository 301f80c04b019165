import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import {
  type TestTls,
  type WebhookReceiver,
  bindChannel,
  makeTestTls,
  startWebhookReceiver,
} from '../../../../test/support/webhook-receivers.fixture.js';
import { buildSlackPayload, slackChannel } from './slack.js';

const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'shop-api', type: 'url', displayName: 'Shop <API>', probe: 'p1', tags: ['prod'] },
  status: 'DOWN',
  previousStatus: 'OK',
  message: 'connect ECONNREFUSED & more',
  responseTimeMs: 12,
  timestampMs: 1_700_000_000_000,
};

describe('slack channel', () => {
  let tls: TestTls;
  let rx: WebhookReceiver;
  before(async () => {
    tls = makeTestTls();
    rx = await startWebhookReceiver(tls);
  });
  after(async () => {
    await rx.close();
    tls.agent.destroy();
  });

  it('builds a Block Kit message: text fallback, header, fields, escaped mrkdwn, context', () => {
    const p = buildSlackPayload(alert) as any;
    assert.equal(typeof p.text, 'string');
    assert.match(p.text, /DOWN/);
    assert.equal(p.blocks[0].type, 'header');
    assert.equal(p.blocks[0].text.type, 'plain_text');
    assert.ok(p.blocks[0].text.text.length <= 150);
    const fields = p.blocks[1].fields as Array<{ type: string; text: string }>;
    assert.equal(p.blocks[1].type, 'section');
    assert.ok(fields.length <= 10 && fields.every((f) => f.type === 'mrkdwn'));
    assert.ok(fields.some((f) => f.text === '*Status*\nDOWN'));
    assert.equal(p.blocks[2].text.text, 'connect ECONNREFUSED &amp; more');
    assert.equal(p.blocks.at(-1).type, 'context');
  });

  it('POSTs JSON to the webhook URL and accepts 200 ok', async () => {
    const ch = bindChannel(slackChannel, tls);
    await ch.send(alert, { enabled: 'true', webhookUrl: `${rx.url}/services/T0/B0/secret` });
    const req = rx.requests.at(-1)!;
    assert.equal(req.path, '/services/T0/B0/secret');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.deepEqual(req.body, buildSlackPayload(alert));
  });

  it('classifies answers: 429 retryable with Retry-After, 500 retryable, 400 not, network error retryable', async () => {
    const ch = bindChannel(slackChannel, tls);
    const s = { webhookUrl: `${rx.url}/hook` };
    rx.plan(
      { status: 429, headers: { 'retry-after': '7' }, body: 'rate_limited' },
      { status: 503 },
      { status: 400, body: 'invalid_payload' },
    );
    const errs: ChannelError[] = [];
    for (let i = 0; i < 3; i++)
      errs.push(
        await ch.send(alert, s).then(
          () => assert.fail('expected error'),
          (e) => e,
        ),
      );
    assert.ok(errs.every((e) => e instanceof ChannelError));
    assert.deepEqual(
      errs.map((e) => [e.retryable, e.retryAfterMs]),
      [
        [true, 7000],
        [true, undefined],
        [false, undefined],
      ],
    );
    assert.match(errs[2]!.message, /invalid_payload/);
    assert.ok(
      errs.every((e) => !e.message.includes('/hook')),
      'the URL never appears in errors',
    );
    const net = await ch.send(alert, { webhookUrl: 'https://127.0.0.1:1/x' }).catch((e) => e);
    assert.ok(net instanceof ChannelError && net.retryable);
  });

  it('times out a slow endpoint as retryable', async () => {
    const ch = bindChannel(slackChannel, tls, 200);
    rx.plan({ status: 200, delayMs: 2000 });
    const e = await ch.send(alert, { webhookUrl: `${rx.url}/slow` }).catch((x) => x);
    assert.ok(e instanceof ChannelError && e.retryable);
    assert.match(e.message, /timed out/);
  });

  it('rejects non-https webhook URLs', () => {
    const ch = slackChannel;
    assert.equal(ch.validate?.({ webhookUrl: 'http://hooks.slack.com/x' })?.field, 'webhookUrl');
    assert.equal(ch.validate?.({ webhookUrl: 'https://hooks.slack.com/services/x' }), undefined);
  });
});
