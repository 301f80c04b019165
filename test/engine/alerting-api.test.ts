/**
 * Alert routing and acknowledgement over the real HTTP API (mTLS, tokens, groups): notifyChannels and channel opt-outs
 * are validated at create and update (400 naming the field); a failing monitor opens a problem listed by
 * /alerting/problems; a readonly user cannot acknowledge it (403), a user can, with a note, and PagerDuty (a local
 * receiver) gets the acknowledge event; the acknowledgement shows in the list and can be removed. The channel catalog
 * is readable by every group.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type MonitorHarness, startMonitor } from '../support/monitor.harness.js';
import { userClient, assertError } from '../support/api.kit.js';
import type { HttpsClient } from '../support/https-client.kit.js';
import {
  type TestTls,
  type WebhookReceiver,
  makeTestTls,
  startWebhookReceiver,
} from '../support/webhook-receivers.fixture.js';

const KEY = 'R0123456789abcdef0123456789ABCDE';
let h: MonitorHarness;
let tls: TestTls;
let pd: WebhookReceiver;
let operator: HttpsClient;
let viewer: HttpsClient;

before(async () => {
  tls = makeTestTls();
  pd = await startWebhookReceiver(tls, { status: 202, body: '{"status":"success"}' });
  h = await startMonitor({ service: { notify: { agent: tls.agent, timeoutMs: 5000 } } });
  operator = await userClient(h, 'operator', 'user');
  viewer = await userClient(h, 'viewer', 'readonly');
  const r = await h.admin.request('POST', '/alerting/channels/pagerduty', {
    body: { enabled: 'true', routingKey: KEY, eventsUrl: `${pd.url}/v2/enqueue` },
  });
  assert.equal(r.status, 200, r.text);
});
after(async () => {
  await h?.stop();
  await pd?.close();
  tls?.agent.destroy();
});

const tcp = (name: string, extra: Record<string, string> = {}) => ({
  name,
  ip: '127.0.0.1',
  port: '9',
  state: 'off',
  notifyStatus: 'on',
  notifyAfter: '1',
  ...extra,
});

test('notifyChannels and opt-outs are checked at create and update, naming the field', async () => {
  const bad: Array<[Record<string, string>, string]> = [
    [{ notifyChannels: 'fax' }, 'body.notifyChannels'],
    [{ notifyChannels: 'slack, tag:bad tag' }, 'body.notifyChannels'],
    [{ notifySlack: 'maybe' }, 'body.notifySlack'],
    [{ notifyTelegram: 'no' }, 'body.notifyTelegram'],
  ];
  for (const [extra, field] of bad) {
    const r = await operator.request('POST', '/tcp/create', { body: tcp('route-bad', extra) });
    assertError(r, 400, field);
    assert.equal(r.body.field, field, r.text);
  }
  const ok = await operator.request('POST', '/tcp/create', {
    body: tcp('route-ok', { notifyChannels: 'pagerduty, tag:oncall', notifyDiscord: 'false' }),
  });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.body.monitor.notifyChannels, 'pagerduty, tag:oncall');
  const upd = await operator.request('POST', '/tcp/update/5MIN/route-ok', { body: { notifyChannels: 'nope' } });
  assertError(upd, 400, 'body.notifyChannels');
});

test('a failing monitor opens a problem; readonly cannot acknowledge it, a user can and PagerDuty is told', async () => {
  const c = await operator.request('POST', '/tcp/create', { body: tcp('ack-me', { notifyChannels: 'pagerduty' }) });
  assert.equal(c.status, 201, c.text);
  const p0 = pd.requests.length;
  const run = await operator.request('GET', '/monitor/run/ack-me/show');
  assert.equal(run.status, 200, run.text);
  assert.equal(run.body.status, 'DOWN');
  await pd.waitFor(p0 + 1);
  assert.equal(pd.requests.at(-1)!.body.event_action, 'trigger');

  const list = await viewer.request('GET', '/alerting/problems?monitor=ack-me');
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    list.body.map((p: any) => [p.monitor, p.status, p.acknowledged]),
    [['ack-me', 'DOWN', undefined]],
  );
  assertError(await viewer.request('POST', '/alerting/ack/ack-me', { body: { note: 'x' } }), 403);

  const ack = await operator.request('POST', '/alerting/ack/ack-me', { body: { note: 'restarting the service' } });
  assert.equal(ack.status, 200, ack.text);
  assert.equal(ack.body.acknowledged.by, 'operator');
  assert.equal(ack.body.acknowledged.note, 'restarting the service');
  await pd.waitFor(p0 + 2);
  assert.deepEqual(
    [pd.requests.at(-1)!.body.event_action, pd.requests.at(-1)!.body.dedup_key],
    ['acknowledge', 'sentinel/tcp/ack-me'],
  );
  const seen = await viewer.request('GET', '/alerting/problems');
  assert.equal(seen.body.find((p: any) => p.monitor === 'ack-me').acknowledged.by, 'operator');

  assertError(await operator.request('POST', '/alerting/ack/no-such-monitor'), 404);
  assertError(await operator.request('POST', '/alerting/ack/route-ok'), 409, 'no open problem');
  const un = await operator.request('DELETE', '/alerting/ack/ack-me');
  assert.equal(un.status, 200, un.text);
  assert.equal(un.body.acknowledged, undefined);
  assertError(await operator.request('DELETE', '/alerting/ack/ack-me'), 409);
});

test('the channel catalog is readable by every group and carries no secret', async () => {
  const r = await viewer.request('GET', '/alerting/catalog');
  assert.equal(r.status, 200, r.text);
  const ids = r.body.map((c: any) => c.id);
  for (const id of [
    'email',
    'webhook',
    'discord',
    'telegram',
    'ntfy',
    'opsgenie',
    'googlechat',
    'mattermost',
    'pushover',
  ])
    assert.ok(ids.includes(id), id);
  assert.ok(!r.text.includes(KEY));
  assertError(await viewer.request('GET', '/alerting/channels'), 403);
});
