import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildDiscordPayload, discordChannel } from './discord.js';

const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'api', type: 'api', displayName: 'Public API', probe: 'eu-1' },
  status: 'MAJOR',
  previousStatus: 'MINOR',
  message: '@everyone response 2300 ms > 2000 ms',
  responseTimeMs: 2300,
  timestampMs: 1_700_000_000_000,
};

describe('discord channel', () => {
  const env = useReceiver({ status: 204 });

  it('builds one embed within Discord limits, coloured by severity, with mentions disabled', () => {
    const p = buildDiscordPayload(alert) as any;
    assert.deepEqual(p.allowed_mentions, { parse: [] }, 'a monitor message cannot ping @everyone');
    assert.equal(p.embeds.length, 1);
    const e = p.embeds[0];
    assert.match(e.title, /^\[MAJOR\] Public API \(api\)/);
    assert.ok(e.title.length <= 256);
    assert.equal(e.description, alert.message);
    assert.equal(e.color, 0xff8000);
    assert.equal(e.timestamp, '2023-11-14T22:13:20.000Z');
    assert.ok(e.fields.length <= 25);
    assert.ok(e.fields.every((f: any) => f.name.length <= 256 && f.value.length <= 1024 && f.value.length > 0));
    assert.deepEqual(
      e.fields.find((f: any) => f.name === 'Status'),
      { name: 'Status', value: 'MAJOR', inline: true },
    );
    const total = JSON.stringify(e).length;
    assert.ok(total < 6000);
    assert.equal((buildDiscordPayload({ ...alert, kind: 'recovery', status: 'OK' }) as any).embeds[0].color, 0x2ecc71);
  });

  it('POSTs the embed to the webhook URL (204); 429 with Retry-After is retryable, 400 is not', async () => {
    const ch = bindChannel(discordChannel, env.tls);
    const s = { webhookUrl: `${env.rx.url}/api/webhooks/1/tok` };
    await ch.send(alert, s);
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/api/webhooks/1/tok');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.ok(Array.isArray(r.body.embeds) && r.body.embeds[0].title);
    env.rx.plan(
      { status: 429, headers: { 'retry-after': '1.5' }, body: '{"retry_after":1.5,"global":false}' },
      { status: 400, body: '{"embeds":["0"]}' },
    );
    const e1 = await failure(ch.send(alert, s));
    const e2 = await failure(ch.send(alert, s));
    assert.ok(e1 instanceof ChannelError && e1.retryable && e1.retryAfterMs === 1500);
    assert.ok(e2 instanceof ChannelError && !e2.retryable);
    assert.ok(![e1.message, e2.message].some((m) => m.includes('tok')));
  });

  it('probe reads the webhook with GET and posts nothing', async () => {
    const ch = bindChannel(discordChannel, env.tls);
    env.rx.plan({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"name":"alerts","channel_id":"99"}',
    });
    const n = env.rx.requests.length;
    const p = await ch.probe({ webhookUrl: `${env.rx.url}/api/webhooks/1/tok` });
    assert.equal(p.ok, true);
    assert.match(p.message ?? '', /alerts.*99/);
    assert.equal(env.rx.requests[n]!.method, 'GET');
    env.rx.plan({ status: 401, body: '{"message":"Invalid Webhook Token"}' });
    assert.equal((await ch.probe({ webhookUrl: `${env.rx.url}/api/webhooks/1/bad` })).ok, false);
  });
});
