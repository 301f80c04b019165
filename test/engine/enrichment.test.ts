/**
 * Issue 18: a failing check asks the discovery agent of the target host what listens on the port. Both real services
 * on loopback (one DATA_DIR, as `npm start` runs them: the agent trusts the monitor's client certificate), the agent
 * registered through the HTTP API with a 15-year component token, a webhook receiver as the alert channel. A child
 * process listens on a port: a tcp monitor with threshMin 0 (every run "slow", MINOR) alerts naming the process; the
 * process is killed: the DOWN alert says nothing listens and names the process that did. GET /enrichments shows both.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, HARNESS_ADMIN_PW, type AgentHarness } from '../support/agent.harness.js';
import { startNamedListener } from '../support/port-listener.fixture.js';
import {
  makeTestTls,
  startWebhookReceiver,
  type TestTls,
  type WebhookReceiver,
} from '../support/webhook-receivers.fixture.js';

let h: MonitorHarness;
let agent: AgentHarness;
let tls: TestTls;
let hook: WebhookReceiver;
let child: ChildProcess;
let port: number;

before(async () => {
  tls = makeTestTls();
  hook = await startWebhookReceiver(tls, { status: 200, body: '{}' });
  h = await startMonitor({
    service: { notify: { agent: tls.agent, timeoutMs: 5000 } },
    // The alert waits for the agent's answer at most this long; the test never depends on how fast it comes.
    env: { ENRICH_WAIT_MS: '30000' },
  });
  agent = await startAgent({}, { DATA_DIR: h.dataDir });
  ({ proc: child, port } = await startNamedListener('fake-pg'));
});
after(async () => {
  child?.kill('SIGKILL');
  await h?.stop({ keepData: true });
  await agent?.close();
  await hook?.close();
  tls?.agent.destroy();
});

test('the agent is registered with its component token; the webhook channel is on', async () => {
  const t = await agent.admin.request('POST', '/loginComponent15Years', {
    body: { username: 'admin', password: HARNESS_ADMIN_PW },
    token: null,
  });
  assert.equal(t.status, 200, t.text);
  const r = await h.admin.request('POST', '/agents/local', {
    body: { url: agent.url, hosts: ['127.0.0.1', 'localhost'], token: t.body.token },
  });
  assert.equal(r.status, 201, r.text);
  const c = await h.admin.request('POST', '/alerting/channels/webhook', {
    body: { enabled: 'true', url: `${hook.url}/hook` },
  });
  assert.equal(c.status, 200, c.text);
});

test('a slow run (MINOR) names the process listening; after a kill the DOWN alert says nothing listens', async () => {
  const m = { name: 'pg-port', ip: '127.0.0.1', port: String(port), state: 'off', notifyStatus: 'on', threshMin: '0' };
  const c = await h.admin.request('POST', '/tcp/create', { body: m });
  assert.equal(c.status, 201, c.text);
  const slow = await h.admin.request('GET', '/monitor/run/pg-port/show');
  assert.equal(slow.body.status, 'MINOR', slow.text);
  await h.svc.alerting.idle();
  const first = hook.requests.find((q) => q.body?.status === 'MINOR');
  assert.ok(first, `a MINOR alert: ${JSON.stringify(hook.requests.map((q) => q.body))}`);
  assert.match(first.body.message, new RegExp(`^port ${port} on 127\\.0\\.0\\.1: fake-pg \\(pid ${child.pid}, user `));
  assert.match(first.body.message, /listening.*host CPU \d+ %, memory \d+ %, load/);

  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  const down = await h.admin.request('GET', '/monitor/run/pg-port/show');
  assert.equal(down.body.status, 'DOWN', down.text);
  await h.svc.alerting.idle();
  const alert = hook.requests.find((q) => q.body?.status === 'DOWN');
  assert.ok(alert, `a DOWN alert: ${JSON.stringify(hook.requests.map((q) => q.body))}`);
  assert.match(
    alert.body.message,
    new RegExp(
      `^port ${port} on 127\\.0\\.0\\.1: no process listening — fake-pg \\(pid ${child.pid}\\) was listening .* ago`,
    ),
  );

  const e = await h.client().request('GET', '/enrichments/pg-port', { token: h.admin.token });
  assert.equal(e.status, 200, e.text);
  assert.equal(e.body.length, 2, e.text);
  assert.equal(e.body[0].listening, false);
  assert.equal(e.body[0].previous.name, 'fake-pg');
  assert.equal(e.body[0].ts, down.body.ts);
  assert.equal(e.body[1].process.name, 'fake-pg');
  assert.equal(e.body[1].process.pid, child.pid);
});

test('a monitor without a registered agent for its host gets no enrichment and alerts at once', async () => {
  const m = { name: 'elsewhere', ip: '127.0.0.2', port: '9', state: 'off', notifyStatus: 'on' };
  assert.equal((await h.admin.request('POST', '/tcp/create', { body: m })).status, 201);
  const r = await h.admin.request('GET', '/monitor/run/elsewhere/show');
  assert.equal(r.body.status, 'DOWN', r.text);
  await h.svc.alerting.idle();
  const alert = hook.requests.find((q) => q.body?.monitor?.name === 'elsewhere');
  assert.ok(alert);
  assert.ok(!/listening/.test(alert.body.message), alert.body.message);
  assert.deepEqual((await h.admin.request('GET', '/enrichments/elsewhere')).body, []);
});
