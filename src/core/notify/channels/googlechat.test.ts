import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Alert } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildGoogleChatPayload, googleChatUrl, googlechatChannel } from './googlechat.js';

const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'mail', type: 'tcp', location: 'dc2' },
  status: 'ERROR',
  message: 'banner <missing>',
  timestampMs: 1_700_000_000_000,
};

describe('google chat channel', () => {
  const env = useReceiver({ status: 200, body: '{"name":"spaces/A/messages/B"}' });

  it('builds a cards v2 message: text fallback, header, decoratedText facts, escaped text, coloured status', () => {
    const p = buildGoogleChatPayload(alert, true) as any;
    assert.match(p.text, /\[ERROR\] mail is ERROR/);
    assert.equal(p.cardsV2.length, 1);
    const { cardId, card } = p.cardsV2[0];
    assert.equal(typeof cardId, 'string');
    assert.match(card.header.title, /ERROR/);
    const widgets = card.sections[0].widgets;
    assert.ok(
      widgets.every(
        (w: any) => typeof w.decoratedText.topLabel === 'string' && typeof w.decoratedText.text === 'string',
      ),
    );
    const status = widgets.find((w: any) => w.decoratedText.topLabel === 'Status').decoratedText.text;
    assert.equal(status, '<font color="#d93025"><b>ERROR</b></font>');
    assert.equal(card.sections[1].widgets[0].textParagraph.text, 'banner &lt;missing&gt;');
    assert.deepEqual(p.thread, { threadKey: 'sentinel-tcp-mail' });
    assert.equal((buildGoogleChatPayload(alert, false) as any).thread, undefined);
  });

  it('POSTs to the space webhook, threaded per monitor with the reply option; 429 retryable, 400 not', async () => {
    const ch = bindChannel(googlechatChannel, env.tls);
    const hook = `${env.rx.url}/v1/spaces/AAA/messages?key=k1&token=t1`;
    await ch.send(alert, { webhookUrl: hook });
    const r = env.rx.requests.at(-1)!;
    const u = new URL(r.path, env.rx.url);
    assert.equal(u.pathname, '/v1/spaces/AAA/messages');
    assert.equal(u.searchParams.get('key'), 'k1');
    assert.equal(u.searchParams.get('token'), 't1');
    assert.equal(u.searchParams.get('messageReplyOption'), 'REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    assert.match(String(r.headers['content-type']), /^application\/json/);
    assert.equal(r.body.thread.threadKey, 'sentinel-tcp-mail');
    assert.ok(r.body.cardsV2[0].card.sections.length >= 1);
    await ch.send(alert, { webhookUrl: hook, threadPerMonitor: 'false' });
    assert.equal(new URL(env.rx.requests.at(-1)!.path, env.rx.url).searchParams.get('messageReplyOption'), null);
    assert.equal(googleChatUrl(hook, false), hook);
    env.rx.plan({ status: 429 }, { status: 400, body: '{"error":{"message":"Invalid JSON payload"}}' });
    const e1 = await failure(ch.send(alert, { webhookUrl: hook }));
    const e2 = await failure(ch.send(alert, { webhookUrl: hook }));
    assert.deepEqual([e1.retryable, e2.retryable], [true, false]);
    assert.ok(![e1.message, e2.message].some((m) => m.includes('t1')));
  });
});
