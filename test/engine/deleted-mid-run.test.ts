/**
 * A run that outlives its monitor: the monitor is deleted while its check is still waiting on the target. Its result
 * is answered to the caller of run now but recorded nowhere — no row in the certificate inventory (it stayed there,
 * persisted, linking to a monitor that no longer exists), no last result or history row that a new monitor of the
 * same name would inherit, no alert for a monitor that is gone; and such a record left in the store by an older
 * version is not listed. Real service over HTTPS, an HTTPS target that answers
 * after 1.5 s, a webhook channel on a local receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import {
  makeTestTls,
  startWebhookReceiver,
  type TestTls,
  type WebhookReceiver,
} from '../support/webhook-receivers.fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a monitor deleted while its check runs', () => {
  let h: MonitorHarness;
  let targets: HttpTargets;
  let tls: TestTls;
  let hook: WebhookReceiver;

  before(async () => {
    tls = makeTestTls();
    hook = await startWebhookReceiver(tls);
    targets = await startHttpTargets();
    h = await startMonitor({ service: { notify: { agent: tls.agent, timeoutMs: 5000 } } });
    const ch = await h.admin.request('POST', '/alerting/channels/webhook', {
      body: { enabled: 'true', url: `${hook.url}/alerts` },
    });
    assert.equal(ch.status, 200, ch.text);
  });
  after(async () => {
    await h?.stop();
    await targets?.close();
    await hook?.close();
    tls?.agent.destroy();
  });

  const monitor = (path: string) => ({
    name: 'gone-mid-run',
    display_name: 'Gone mid-run',
    probe: 'p',
    url: `${targets.httpsUrl}${path}`,
    pattern: 'never-in-the-body',
    ignoreTlsErrors: 'true',
    sched: '60MIN',
    state: 'off',
    notifyStatus: 'on',
    notifyAfter: '1',
  });
  const create = async (path: string) => {
    const r = await h.admin.request('POST', '/url/create', { body: monitor(path) });
    assert.equal(r.status, 201, r.text);
  };
  const details = () =>
    h.admin.request('POST', '/getMonitorDetails', { body: { type: 'url', name: 'gone-mid-run', sched: '60MIN' } });

  it('records no certificate, last result, history row or alert', async () => {
    // The same monitor run to the end alerts and lists its certificate: what the deleted one must not do.
    await create('/ok');
    const control = await h.admin.request('GET', '/monitor/run/gone-mid-run/hide');
    assert.equal(control.body.status, 'ERROR', control.text);
    await hook.waitFor(1);
    assert.equal((await h.admin.request('GET', '/certificates')).body.length, 1);
    assert.equal((await h.admin.request('DELETE', '/delete/exec/60MIN/gone-mid-run')).status, 200);
    assert.equal((await h.admin.request('GET', '/certificates')).body.length, 0, 'a deleted monitor leaves');
    const alertsBefore = hook.requests.length;

    await create('/slow?ms=1500');
    const running = h.admin.request('GET', '/monitor/run/gone-mid-run/hide');
    await sleep(400);
    assert.equal((await h.admin.request('DELETE', '/delete/exec/60MIN/gone-mid-run')).status, 200);
    const answered = await running;
    assert.equal(answered.body.status, 'ERROR', 'run now still answers its result');
    await sleep(500); // an alert would be queued and sent by now (the control's was within this)

    assert.deepEqual((await h.admin.request('GET', '/certificates')).body, [], 'no certificate of a deleted monitor');
    assert.equal(hook.requests.length, alertsBefore, 'no alert for a deleted monitor');
    assert.equal((await details()).status, 404);
    // A new monitor of that name starts empty: nothing of the run that outlived the old one.
    await create('/ok');
    const fresh = await details();
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.body.last ?? undefined, undefined, JSON.stringify(fresh.body.last));
    assert.deepEqual(fresh.body.recent ?? [], []);
  });

  it('a stored certificate record of a monitor that is gone is not listed', async () => {
    // Such records were left by the race above before it was fixed: the inventory loads them from the store.
    assert.equal((await h.admin.request('GET', '/monitor/run/gone-mid-run/hide')).body.status, 'ERROR');
    const certs = h.svc.platform.store.bucket('certificates');
    let rec = await certs.get<Record<string, unknown>>('gone-mid-run');
    for (let i = 0; i < 40 && !rec; i++) {
      await sleep(50); // written after the result, not awaited by it
      rec = await certs.get<Record<string, unknown>>('gone-mid-run');
    }
    assert.ok(rec, 'the run recorded its certificate');
    await certs.put('long-gone', { ...rec, name: 'long-gone' });
    const dataDir = h.dataDir;
    await h.stop({ keepData: true });
    h = await startMonitor({ dataDir, service: { notify: { agent: tls.agent, timeoutMs: 5000 } } });
    const listed = (await h.admin.request('GET', '/certificates')).body as Array<{ monitors: Array<{ name: string }> }>;
    assert.deepEqual(
      listed.map((c) => c.monitors.map((m) => m.name)),
      [['gone-mid-run']],
    );
  });
});
