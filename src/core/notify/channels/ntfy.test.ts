import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildNtfyRequest, headerText, ntfyChannel } from './ntfy.js';

const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'nas', type: 'ping', displayName: 'NAS – basement' },
  status: 'DOWN',
  message: '100% loss',
  timestampMs: 1_700_000_000_000,
};

/** RFC 2047 B-encoding back to text (what ntfy does with an encoded Title). */
const decode2047 = (v: string): string => {
  const m = /^=\?UTF-8\?B\?([A-Za-z0-9+/=]+)\?=$/.exec(v);
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : v;
};

describe('ntfy channel', () => {
  const env = useReceiver({ status: 200, body: '{"id":"x","event":"message"}' });

  it('maps severity to ntfy priority and kind to emoji tags', () => {
    const prio = (status: string, kind: Alert['kind'] = 'problem') =>
      buildNtfyRequest({ ...alert, status, kind }).headers.Priority;
    assert.deepEqual(
      ['CRITICAL', 'DOWN', 'MAJOR', 'ERROR', 'EXCEPTION', 'MINOR'].map((s) => prio(s)),
      ['5', '5', '4', '4', '4', '3'],
    );
    assert.equal(prio('OK', 'recovery'), '3');
    assert.equal(prio('OK', 'test'), '2');
    assert.equal(buildNtfyRequest(alert).headers.Tags, 'rotating_light,DOWN,ping');
    assert.equal(
      buildNtfyRequest({ ...alert, kind: 'recovery', status: 'OK' }).headers.Tags,
      'white_check_mark,OK,ping',
    );
    assert.equal(headerText('plain'), 'plain');
    assert.equal(decode2047(headerText('NAS – basement')), 'NAS – basement');
  });

  it('POSTs the text body to <server>/<topic> with Title, Priority, Tags and a bearer token', async () => {
    const ch = bindChannel(ntfyChannel, env.tls);
    await ch.send(alert, { serverUrl: env.rx.url, topic: 'alerts-x9', accessToken: 'tk_abc' });
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, '/alerts-x9');
    assert.match(String(r.headers['content-type']), /^text\/plain/);
    assert.equal(decode2047(String(r.headers.title)), '[DOWN] NAS – basement (nas) is DOWN');
    assert.equal(r.headers.priority, '5');
    assert.equal(r.headers.tags, 'rotating_light,DOWN,ping');
    assert.equal(r.headers.authorization, 'Bearer tk_abc');
    assert.match(r.raw, /Status: DOWN/);
    assert.match(r.raw, /100% loss/);
  });

  it('uses Basic auth with a user name and password; 403 is not retryable, 429 is', async () => {
    const ch = bindChannel(ntfyChannel, env.tls);
    const s = { serverUrl: env.rx.url, topic: 't', username: 'phil', password: 'pw:1' };
    await ch.send(alert, s);
    assert.equal(env.rx.requests.at(-1)!.headers.authorization, `Basic ${Buffer.from('phil:pw:1').toString('base64')}`);
    env.rx.plan({ status: 403, body: '{"code":40301,"http":403,"error":"forbidden"}' }, { status: 429 });
    const e1 = await failure(ch.send(alert, s));
    const e2 = await failure(ch.send(alert, s));
    assert.deepEqual(
      [e1 instanceof ChannelError && e1.retryable, e2 instanceof ChannelError && e2.retryable],
      [false, true],
    );
    assert.ok(![e1.message, e2.message].some((m) => m.includes('pw:1')));
  });

  it('probe asks <server>/<topic>/auth and publishes nothing', async () => {
    const ch = bindChannel(ntfyChannel, env.tls);
    env.rx.plan(
      { status: 200, body: '{"success":true}' },
      { status: 401, body: '{"code":40101,"error":"unauthorized"}' },
    );
    const n = env.rx.requests.length;
    const ok = await ch.probe({ serverUrl: env.rx.url, topic: 'alerts', accessToken: 'tk_abc' });
    const bad = await ch.probe({ serverUrl: env.rx.url, topic: 'alerts', accessToken: 'tk_bad' });
    assert.deepEqual([ok.ok, bad.ok], [true, false]);
    assert.deepEqual(
      env.rx.requests.slice(n).map((r) => [r.method, r.path, r.headers.authorization]),
      [
        ['GET', '/alerts/auth', 'Bearer tk_abc'],
        ['GET', '/alerts/auth', 'Bearer tk_bad'],
      ],
    );
  });

  it('validates the server URL and the user name with a password', () => {
    assert.equal(ntfyChannel.validate?.({ serverUrl: 'http://ntfy.local' })?.field, 'serverUrl');
    assert.equal(ntfyChannel.validate?.({ password: 'x' })?.field, 'username');
    assert.equal(ntfyChannel.validate?.({ serverUrl: 'https://ntfy.local', topic: 'a' }), undefined);
  });
});
