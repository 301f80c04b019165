/**
 * api "numeric extraction and threshold comparison" through the HTTP API: with a pattern, threshMin/Maj/Cri compare
 * the extracted number (a value equal to a threshold reaches it), the response time has respThresh* of its own, and
 * threshOn chooses explicitly; caCert lets url/api monitors trust a private CA (here the fixture's test CA) in
 * addition to the system store.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';

let h: MonitorHarness;
let t: HttpTargets;
before(async () => {
  [h, t] = await Promise.all([startMonitor(), startHttpTargets()]);
});
after(async () => {
  await Promise.all([h?.stop(), t?.close()]);
});

let n = 0;
async function runApi(fields: Record<string, string>) {
  const name = `thr-${++n}`;
  const c = await h.admin.request('POST', '/api/create', {
    body: { name, state: 'off', api: `${t.httpUrl}/json`, ...fields },
  });
  assert.equal(c.status, 201, c.text);
  const r = await h.admin.request('GET', `/monitor/run/${name}/show`);
  assert.equal(r.status, 200, r.text);
  return { monitor: c.body.monitor, result: r.body };
}

const TEMP = '"temp":\\s*(\\d+)'; // the fixture's /json has "temp": 42

test('with a numeric pattern, thresholds compare the extracted value (42)', async () => {
  const { monitor, result } = await runApi({ pattern: TEMP, threshMin: '10', threshMaj: '40', threshCri: '100' });
  assert.equal(monitor.threshOn, 'value');
  assert.equal(result.metrics.extractedValue, 42);
  assert.equal(result.status, 'MAJOR', '42 >= 40');
  assert.equal((await runApi({ pattern: TEMP, threshMin: '43' })).result.status, 'OK', '42 < 43');
});

test('a value equal to a threshold reaches it (>=)', async () => {
  assert.equal((await runApi({ pattern: TEMP, threshMaj: '42', threshCri: '43' })).result.status, 'MAJOR');
  assert.equal((await runApi({ pattern: TEMP, threshCri: '42' })).result.status, 'CRITICAL');
});

test('the response time keeps thresholds of its own (respThresh*); the worse level wins', async () => {
  const { result } = await runApi({ pattern: TEMP, threshCri: '1000', respThreshMaj: '0' });
  assert.equal(result.status, 'MAJOR', 'any response time >= 0 ms reaches respThreshMaj 0');
  const both = await runApi({ pattern: TEMP, threshCri: '42', respThreshMin: '0' });
  assert.equal(both.result.status, 'CRITICAL');
});

test('threshOn responseTime: thresholds compare the response time even with a pattern', async () => {
  const { monitor, result } = await runApi({
    pattern: TEMP,
    threshOn: 'responseTime',
    threshMin: '0',
    threshMaj: '100000',
  });
  assert.equal(monitor.threshOn, 'responseTime');
  assert.equal(result.status, 'MINOR', 'response time >= 0 ms; the value 42 is not compared');
  const noPattern = await runApi({ threshMin: '0', threshMaj: '100000' });
  assert.equal(noPattern.monitor.threshOn, 'responseTime');
  assert.equal(noPattern.result.status, 'MINOR');
});

test('a value that is not a number: thresholds are not applied, and the result says why', async () => {
  const { result } = await runApi({ pattern: '"name":"(\\w+)"', threshOn: 'value', threshMin: '0' });
  assert.equal(result.status, 'OK');
  assert.match(result.details.thresholdNote, /not a number/);
  const str = await runApi({ pattern: '"name":"(\\w+)"', patternComp: 'string ==', patternCompValCri: 'other' });
  assert.equal(str.monitor.threshOn, 'responseTime', 'a string comparison: thresholds stay on the response time');
  const bad = await h.admin.request('POST', '/api/create', {
    body: { name: 'thr-bad', api: `${t.httpUrl}/json`, threshOn: 'value' },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, 'body.threshOn');
});

test('caCert: a url or api monitor trusts a private CA in addition to the system store', async () => {
  const mk = (type: string, name: string, extra: Record<string, string>) =>
    h.admin.request('POST', `/${type}/create`, {
      body: { name, display_name: name, sched: '5MIN', state: 'off', probe: 'p', ...extra },
    });
  const run = async (name: string) => (await h.admin.request('GET', `/monitor/run/${name}/show`)).body;
  assert.equal((await mk('url', 'ca-none', { url: `${t.httpsUrl}/ok` })).status, 201);
  const untrusted = await run('ca-none');
  assert.equal(untrusted.status, 'ERROR', `without caCert the test CA is not trusted: ${untrusted.message}`);
  assert.equal((await mk('url', 'ca-url', { url: `${t.httpsUrl}/ok`, caCert: t.certs.caPem })).status, 201);
  const trusted = await run('ca-url');
  assert.equal(trusted.status, 'OK', trusted.message);
  assert.ok(trusted.metrics.certDaysLeft > 300);
  // An mTLS service of one's own: the private CA plus a client certificate.
  const api = await mk('api', 'ca-api', {
    api: `${t.httpsUrl}/mtls`,
    caCert: t.certs.caPem,
    clientCert: fs.readFileSync(t.certs.clientCertPath, 'utf8'),
    clientCertKey: fs.readFileSync(t.certs.clientKeyPath, 'utf8'),
  });
  assert.equal(api.status, 201, api.text);
  const mtls = await run('ca-api');
  assert.equal(mtls.status, 'OK', mtls.message);
  for (const [caCert, why] of <Array<[string, string]>>[
    ['not a certificate', 'not PEM'],
    [`${t.certs.caPem}\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n`, 'a key next to it'],
    ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', 'does not parse'],
  ]) {
    const r = await mk('url', `ca-bad-${why.length}`, { url: `${t.httpsUrl}/ok`, caCert });
    assert.equal(r.status, 400, `${why}: ${r.text}`);
    assert.equal(r.body.field, 'body.caCert');
  }
});
