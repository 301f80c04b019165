import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildMattermostPayload, mattermostChannel } from './mattermost.js';

const alert: Alert = {
  kind: 'recovery',
  monitor: { name: 'vpn', type: 'ping' },
  status: 'OK',
  previousStatus: 'DOWN',
  timestampMs: 1_700_000_000_000,
};

describe('mattermost / rocket.chat channel', () => {
  const env = useReceiver({ status: 200, body: 'ok' });

  it('builds a Slack-compatible body: text and one attachment with colour, title, short fields and ts', () => {
    const p = buildMattermostPayload(alert, { username: 'sentinel', channel: 'alerts' }) as any;
    assert.match(p.text, /RECOVERED/);
    assert.equal(p.username, 'sentinel');
    assert.equal(p.channel, 'alerts');
    assert.equal(p.blocks, undefined, 'no Block Kit: neither server renders it');
    const a = p.attachments[0];
    assert.equal(a.color, '#2eb67d');
    assert.equal(a.fallback, p.text);
    assert.ok(
      a.fields.every((f: any) => typeof f.title === 'string' && typeof f.value === 'string' && f.short === true),
    );
    assert.equal(a.ts, 1_700_000_000);
    assert.equal(
      (buildMattermostPayload({ ...alert, kind: 'problem', status: 'MINOR' }) as any).attachments[0].color,
      '#ffcc00',
    );
  });

  it('POSTs to a Mattermost hook (200 ok) and a Rocket.Chat hook (200 {"success":true}); 404 not retryable', async () => {
    const ch = bindChannel(mattermostChannel, env.tls);
    await ch.send(alert, { webhookUrl: `${env.rx.url}/hooks/xyzkey`, username: 'bot' });
    let r = env.rx.requests.at(-1)!;
    assert.equal(r.path, '/hooks/xyzkey');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body.username, 'bot');
    assert.equal(r.body.attachments.length, 1);
    env.rx.plan({ status: 200, body: '{"success":true}' });
    await ch.send(alert, { webhookUrl: `${env.rx.url}/hooks/id1/tok1` });
    r = env.rx.requests.at(-1)!;
    assert.equal(r.path, '/hooks/id1/tok1');
    env.rx.plan({ status: 404, body: 'Unable to find the webhook' });
    const e = await failure(ch.send(alert, { webhookUrl: `${env.rx.url}/hooks/gone` }));
    assert.ok(e instanceof ChannelError && !e.retryable);
    assert.equal(
      mattermostChannel.validate?.({ webhookUrl: `${env.rx.url}/h`, iconUrl: 'http://x/i.png' })?.field,
      'iconUrl',
    );
  });
});
