import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildPushoverMessage, pushoverChannel } from './pushover.js';

const TOKEN = 'azGDORePK8gMaC0QOYAMyEEuzJnyUi';
const USER = 'uQiRzpo4DXghDmr9QzzfQu27cmVRsG';
const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'router', type: 'snmp' },
  status: 'DOWN',
  message: 'no answer',
  timestampMs: 1_700_000_000_000,
};

describe('pushover channel', () => {
  const env = useReceiver({ status: 200, body: '{"status":1,"request":"abc"}' });
  const s = (over: Record<string, string> = {}) => ({ appToken: TOKEN, userKey: USER, apiUrl: env.rx.url, ...over });

  it('maps severity to Pushover priority and stays within the message limits', () => {
    const prio = (status: string, kind: Alert['kind'] = 'problem') =>
      buildPushoverMessage({ ...alert, status, kind }).priority;
    assert.deepEqual(
      ['CRITICAL', 'DOWN', 'MAJOR', 'ERROR', 'MINOR'].map((x) => prio(x)),
      ['1', '1', '0', '0', '0'],
    );
    assert.equal(prio('OK', 'recovery'), '-1');
    const m = buildPushoverMessage({ ...alert, message: 'x'.repeat(5000) });
    assert.ok(m.message!.length <= 1024 && m.title!.length <= 250);
    assert.equal(m.timestamp, '1700000000');
  });

  it('POSTs form fields token, user, message, title, priority, timestamp, device, sound to /1/messages.json', async () => {
    const ch = bindChannel(pushoverChannel, env.tls);
    await ch.send(alert, s({ device: 'phone', sound: 'siren' }));
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/1/messages.json');
    assert.equal(r.headers['content-type'], 'application/x-www-form-urlencoded');
    const f = Object.fromEntries(new URLSearchParams(r.raw));
    assert.deepEqual(Object.keys(f).sort(), [
      'device',
      'message',
      'priority',
      'sound',
      'timestamp',
      'title',
      'token',
      'user',
    ]);
    assert.equal(f.token, TOKEN);
    assert.equal(f.user, USER);
    assert.equal(f.priority, '1');
    assert.equal(f.device, 'phone');
    assert.equal(f.sound, 'siren');
    assert.match(f.title!, /\[DOWN\] router is DOWN/);
    assert.match(f.message!, /no answer/);
  });

  it('4xx {status:0} is not retryable, 429 and 5xx are; keys never appear in errors', async () => {
    const ch = bindChannel(pushoverChannel, env.tls);
    env.rx.plan(
      { status: 400, body: '{"user":"invalid","errors":["user identifier is invalid"],"status":0}' },
      { status: 429 },
      { status: 500 },
    );
    const errs: ChannelError[] = [];
    for (let i = 0; i < 3; i++) errs.push(await failure(ch.send(alert, s())));
    assert.deepEqual(
      errs.map((e) => e instanceof ChannelError && e.retryable),
      [false, true, true],
    );
    assert.match(errs[0]!.message, /user identifier is invalid/);
    assert.ok(errs.every((e) => !e.message.includes(TOKEN) && !e.message.includes(USER)));
  });

  it('probe validates the keys with /1/users/validate.json and pushes nothing', async () => {
    const ch = bindChannel(pushoverChannel, env.tls);
    env.rx.plan({ status: 200, body: '{"status":1,"group":0,"devices":["phone","tablet"]}' });
    const n = env.rx.requests.length;
    const p = await ch.probe(s());
    assert.equal(p.ok, true);
    assert.match(p.message ?? '', /phone, tablet/);
    assert.equal(env.rx.requests[n]!.path, '/1/users/validate.json');
    assert.deepEqual(Object.fromEntries(new URLSearchParams(env.rx.requests[n]!.raw)), { token: TOKEN, user: USER });
  });
});
