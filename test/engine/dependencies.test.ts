/**
 * Dependencies between monitors (issue 18 §3) through the HTTP API, with alerts delivered to a local PagerDuty
 * receiver: a router → switch → 20 services chain (the services depend on the switch by tag) raises one alert, not
 * 22; the suppressed results keep their status and say which parent; once the parent recovers a monitor still
 * failing alerts; recoveries are never suppressed; cycles, self-parents and bad entries are refused naming the field.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { type MonitorHarness, startMonitor } from '../support/monitor.harness.js';
import {
  makeTestTls,
  startWebhookReceiver,
  type TestTls,
  type WebhookReceiver,
} from '../support/webhook-receivers.fixture.js';

let h: MonitorHarness;
let tls: TestTls;
let pd: WebhookReceiver;
let open: net.Server;
let openPort: number;
const DEAD = '9'; // discard: nothing listens on loopback

before(async () => {
  tls = makeTestTls();
  pd = await startWebhookReceiver(tls, { status: 202, body: '{"status":"success"}' });
  h = await startMonitor({ service: { notify: { agent: tls.agent, timeoutMs: 5000 } } });
  const r = await h.admin.request('POST', '/alerting/channels/pagerduty', {
    body: { enabled: 'true', routingKey: 'R0123456789abcdef0123456789ABCDE', eventsUrl: `${pd.url}/v2/enqueue` },
  });
  assert.equal(r.status, 200, r.text);
  open = net.createServer((c) => c.end()).listen(0, '127.0.0.1');
  await new Promise((res) => open.once('listening', res));
  openPort = (open.address() as net.AddressInfo).port;
});
after(async () => {
  await h?.stop();
  await pd?.close();
  tls?.agent.destroy();
  open?.close();
});

const tcp = (name: string, extra: Record<string, string> = {}) =>
  h.admin.request('POST', '/tcp/create', {
    body: { name, ip: '127.0.0.1', port: DEAD, state: 'off', notifyStatus: 'on', ...extra },
  });
const run = async (name: string) => (await h.admin.request('GET', `/monitor/run/${name}/show`)).body;
const actions = () => pd.requests.map((q) => `${q.body.event_action}:${q.body.payload?.source ?? q.body.dedup_key}`);

test('router → switch → 20 services: one alert, not 22; the children say which parent', async () => {
  assert.equal((await tcp('router')).status, 201);
  assert.equal((await tcp('switch', { parents: '[router]', tags: '[switches]' })).status, 201);
  for (let i = 1; i <= 20; i++) assert.equal((await tcp(`svc-${i}`, { parents: '[tag:switches]' })).status, 201);

  assert.equal((await run('router')).status, 'DOWN');
  const sw = await run('switch');
  assert.equal(sw.status, 'DOWN', 'a suppressed result keeps its real status');
  assert.match(sw.message, /alerts suppressed: parent router is DOWN/);
  for (let i = 1; i <= 20; i++) {
    const s = await run(`svc-${i}`);
    assert.equal(s.status, 'DOWN');
    assert.match(s.message, /alerts suppressed: parent switch is DOWN/);
    assert.deepEqual(s.details.suppressedBy, { name: 'switch', status: 'DOWN' });
  }
  await h.svc.alerting.idle();
  assert.equal(pd.requests.length, 1, `one alert: ${JSON.stringify(actions())}`);
  assert.equal(pd.requests[0]!.body.event_action, 'trigger');
  const list = (await h.admin.request('GET', '/monitors')).body as Array<{ name: string; last?: { message?: string } }>;
  assert.match(list.find((m) => m.name === 'svc-7')!.last!.message!, /parent switch is DOWN/, 'shown in the list');
  const last = (n: string) => (list.find((m) => m.name === n)!.last as { suppressedBy?: string }).suppressedBy;
  assert.equal(last('svc-7'), 'switch', 'the list names the parent (the dashboard groups the row under it)');
  assert.equal(last('router'), undefined);
});

test('the parent recovers: its recovery goes out, and a child still failing alerts then', async () => {
  const up = await h.admin.request('POST', '/tcp/update/5MIN/router', { body: { port: String(openPort) } });
  assert.equal(up.status, 200, up.text);
  assert.equal((await run('router')).status, 'OK');
  const sw = await run('switch');
  assert.equal(sw.status, 'DOWN');
  assert.doesNotMatch(sw.message, /suppressed/);
  await h.svc.alerting.idle();
  assert.deepEqual(
    pd.requests.map((q) => q.body.event_action),
    ['trigger', 'resolve', 'trigger'],
    'router trigger, router resolve, then the switch (still down once its parent is up)',
  );
  // A recovery is never suppressed: with the router down again, the switch's recovery still goes out.
  await h.admin.request('POST', '/tcp/update/5MIN/router', { body: { port: DEAD } });
  assert.equal((await run('router')).status, 'DOWN');
  await h.admin.request('POST', '/tcp/update/5MIN/switch', { body: { port: String(openPort) } });
  assert.equal((await run('switch')).status, 'OK');
  await h.svc.alerting.idle();
  assert.deepEqual(
    pd.requests.map((q) => q.body.event_action),
    ['trigger', 'resolve', 'trigger', 'trigger', 'resolve'],
  );
});

test('cycles, self-parents and bad entries are refused naming parents; unknown parents are a warning', async () => {
  const cycle = await h.admin.request('POST', '/tcp/update/5MIN/router', { body: { parents: '[svc-3]' } });
  assert.equal(cycle.status, 400, cycle.text);
  assert.equal(cycle.body.field, 'body.parents');
  assert.match(cycle.body.message, /cycle \(router → svc-3 → switch → router\)/);
  // a tag change can close a cycle as well: the router tagged as a service's parent tag
  await tcp('edge', { parents: '[tag:switches]' });
  const viaTag = await h.admin.request('POST', '/tcp/update/5MIN/router', { body: { parents: '[edge]' } });
  assert.equal(viaTag.status, 400, viaTag.text);
  const self = await tcp('selfie', { parents: '[selfie]' });
  assert.equal(self.status, 400);
  assert.match(self.body.message, /its own parent/);
  const badEntry = await tcp('odd', { parents: '[not a name!]' });
  assert.equal(badEntry.status, 400);
  assert.equal(badEntry.body.field, 'body.parents');
  const later = await tcp('early-child', { parents: '[not-yet-there]' });
  assert.equal(later.status, 201);
  assert.deepEqual(later.body.warnings, [
    'parents: no monitor named not-yet-there (yet): until there is one it never suppresses an alert',
  ]);
});
