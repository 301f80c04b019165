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
import { ADAPTIVE_CARD_SCHEMA, buildTeamsPayload, teamsChannel } from './teams.js';

const alert: Alert = {
  kind: 'recovery',
  monitor: { name: 'db-main', type: 'db', location: 'dc1' },
  status: 'OK',
  previousStatus: 'DOWN',
  timestampMs: 1_700_000_000_000,
};

describe('teams channel', () => {
  let tls: TestTls;
  let rx: WebhookReceiver;
  before(async () => {
    tls = makeTestTls();
    rx = await startWebhookReceiver(tls, { status: 202 });
  });
  after(async () => {
    await rx.close();
    tls.agent.destroy();
  });

  it("builds a message with one Adaptive Card attachment per Microsoft's format", () => {
    const p = buildTeamsPayload(alert) as any;
    assert.equal(p.type, 'message');
    assert.equal(p.attachments.length, 1);
    const a = p.attachments[0];
    assert.equal(a.contentType, 'application/vnd.microsoft.card.adaptive');
    assert.equal(a.contentUrl, null);
    assert.equal(a.content.$schema, ADAPTIVE_CARD_SCHEMA);
    assert.equal(a.content.type, 'AdaptiveCard');
    assert.match(a.content.version, /^1\.\d$/);
    assert.equal(a.content.body[0].type, 'TextBlock');
    assert.match(a.content.body[0].text, /RECOVERED.*db-main.*OK/);
    assert.equal(a.content.body[0].color, 'Good');
    const facts = a.content.body[1];
    assert.equal(facts.type, 'FactSet');
    assert.deepEqual(
      facts.facts.find((f: any) => f.title === 'Previous status'),
      { title: 'Previous status', value: 'DOWN' },
    );
  });

  it('POSTs the card and accepts 202 (Workflows); 429/5xx retryable, 4xx not', async () => {
    const ch = bindChannel(teamsChannel, tls);
    const s = { enabled: 'true', webhookUrl: `${rx.url}/workflows/abc?sig=secret` };
    await ch.send(alert, s);
    assert.deepEqual(rx.requests.at(-1)!.body, buildTeamsPayload(alert));
    assert.equal(rx.requests.at(-1)!.path, '/workflows/abc?sig=secret');
    rx.plan({ status: 429, headers: { 'retry-after': '2' } }, { status: 502 }, { status: 404 });
    const errs: ChannelError[] = [];
    for (let i = 0; i < 3; i++) errs.push(await ch.send(alert, s).catch((e) => e));
    assert.deepEqual(
      errs.map((e) => [e instanceof ChannelError, e.retryable, e.retryAfterMs]),
      [
        [true, true, 2000],
        [true, true, undefined],
        [true, false, undefined],
      ],
    );
    assert.ok(errs.every((e) => !e.message.includes('secret')));
  });
});
