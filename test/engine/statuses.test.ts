/**
 * The status table end to end: monitors created over the API against real loopback targets, run with
 * GET /monitor/run/{name}/show, each status of the table produced and asserted (docs/statuses.md).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';

let h: MonitorHarness;
let t: HttpTargets;
let closedPort: number;

async function freePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  [h, t, closedPort] = await Promise.all([startMonitor(), startHttpTargets(), freePort()]);
});
after(async () => {
  await h?.stop();
  await t?.close();
});

const common = { sched: '5MIN', state: 'on', probe: 'p1', display_name: 'x' };

async function createAndRun(type: string, body: Record<string, string>) {
  const c = await h.admin.request('POST', `/${type}/create`, { body: { ...common, ...body } });
  assert.equal(c.status, 201, c.text);
  const r = await h.admin.request('GET', `/monitor/run/${body.name}/show`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test('OK: a url answering 200 with the expected body', async () => {
  const r = await createAndRun('url', { name: 's-ok', url: `${t.httpUrl}/ok`, pattern: 'hello' });
  assert.equal(r.status, 'OK');
  assert.equal(r.outcome, 'up');
  assert.equal(r.metrics.statusCode, 200);
  assert.ok(r.metrics.connectMs >= 0 && r.metrics.ttfbMs >= 0);
});

test('MINOR, MAJOR, CRITICAL: the highest threshold the response time reaches', async () => {
  const slow = `${t.httpUrl}/slow?ms=200`;
  assert.equal(
    (
      await createAndRun('url', {
        name: 's-minor',
        url: slow,
        threshMin: '1',
        threshMaj: '100000',
        threshCri: '200000',
      })
    ).status,
    'MINOR',
  );
  assert.equal(
    (await createAndRun('url', { name: 's-major', url: slow, threshMin: '1', threshMaj: '2', threshCri: '200000' }))
      .status,
    'MAJOR',
  );
  const cri = await createAndRun('url', { name: 's-cri', url: slow, threshMin: '1', threshMaj: '2', threshCri: '3' });
  assert.equal(cri.status, 'CRITICAL');
  assert.equal(cri.thresholds.source, 'fixed');
});

test('CRITICAL from patternComp: number > 40 with an extracted 42', async () => {
  const r = await createAndRun('api', {
    name: 's-pcomp',
    api: `${t.httpUrl}/json`,
    typeApi: 'GET',
    pattern: '"temp":\\s*(?<temp>\\d+)',
    matchGroupName: 'temp',
    patternComp: 'number >',
    patternCompValCri: '40',
  });
  assert.equal(r.status, 'CRITICAL');
  assert.equal(r.details.extracted, '42');
});

test('DOWN: refused connection and timeout', async () => {
  assert.equal(
    (await createAndRun('tcp', { name: 's-refused', ip: '127.0.0.1', port: String(closedPort) })).status,
    'DOWN',
  );
  const hang = await createAndRun('url', { name: 's-hang', url: `${t.httpUrl}/hang`, timeout: '1' });
  assert.equal(hang.status, 'DOWN');
  assert.match(hang.message, /timeout/);
});

test('ERROR: HTTP 500, and a pattern that is absent', async () => {
  const r500 = await createAndRun('url', { name: 's-500', url: `${t.httpUrl}/status/500` });
  assert.equal(r500.status, 'ERROR');
  assert.match(r500.message, /500/);
  assert.equal(
    (await createAndRun('url', { name: 's-nopat', url: `${t.httpUrl}/ok`, pattern: 'not-there' })).status,
    'ERROR',
  );
});

test('EXCEPTION: a client certificate file removed from <DATA_DIR>/client-certs/ after create', async () => {
  const dir = path.join(h.dataDir, 'client-certs');
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(t.certs.clientCertPath, path.join(dir, 'c.pem'));
  fs.copyFileSync(t.certs.clientKeyPath, path.join(dir, 'k.pem'));
  const body = { ...common, name: 's-exc', api: `${t.httpsUrl}/mtls`, typeApi: 'GET', clientCert: 'c.pem' };
  const c = await h.admin.request('POST', '/api/create', { body: { ...body, clientCertKey: 'k.pem' } });
  assert.equal(c.status, 201, c.text);
  fs.rmSync(path.join(dir, 'c.pem'));
  const r = await h.admin.request('GET', '/monitor/run/s-exc/show');
  assert.equal(r.body.status, 'EXCEPTION');
  assert.match(r.body.message, /clientCert: no readable regular file/);
});

test('retries: a failing check is attempted 1 + retries times', async () => {
  const r = await createAndRun('tcp', { name: 's-retry', ip: '127.0.0.1', port: String(closedPort), retries: '2' });
  assert.equal(r.status, 'DOWN');
  assert.equal(r.attempts, 3);
});

test('DOWNTIME: a maintenance window covering the monitor', async () => {
  await h.svc.alerting.maintenance.create({
    name: 'w',
    from: String(Date.now() - 60_000),
    to: String(Date.now() + 3_600_000),
    monitors: 's-dt',
  });
  const r = await createAndRun('tcp', { name: 's-dt', ip: '127.0.0.1', port: String(closedPort) });
  assert.equal(r.status, 'DOWNTIME');
  assert.equal(r.downtime, true);
  assert.equal(r.outcome, 'down', 'the check still ran and recorded what it found');
});

test('hide output carries status, response time and state only', async () => {
  const r = await h.admin.request('GET', '/monitor/run/s-ok/hide');
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body).sort(), ['name', 'responseTimeMs', 'state', 'status', 'ts']);
  assert.equal((await h.admin.request('GET', '/monitor/run/nope/show')).status, 404);
  assert.equal((await h.admin.request('GET', '/monitor/run/s-ok/all')).status, 400);
});

test('results are stored: the timeline shows the runs', async () => {
  await h.svc.history.flush();
  const now = Date.now();
  const r = await h.admin.request('POST', `/timelineGraph/url/s-500/${now - 3_600_000}/${now + 1000}`);
  assert.equal(r.status, 200, r.text);
  assert.ok(JSON.stringify(r.body).includes('ERROR'));
});
