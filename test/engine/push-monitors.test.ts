/**
 * Push (heartbeat) monitors through the HTTP API (issue 18 part 2): the real service on port 0 with PUSH_PORT=0, the
 * job's pings sent by a real HTTPS client WITHOUT a client certificate to the push listener. On-time, late, fail
 * signals and exit codes, a long-running job (start → success duration), token rotation, a flood of pings (429 with
 * Retry-After; the service stays responsive), the listener serving nothing but the ping routes, and the token never
 * shown again (list, details, logs). No timed assertion: states are polled with a generous bound.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { type MonitorHarness, startMonitor } from '../support/monitor.harness.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { X509Certificate } from 'node:crypto';
import { issueCert } from '../../src/core/pki/certs.js';
import { peerSerial } from '../support/api.kit.js';

let h: MonitorHarness;
let job: HttpsClient;
const tokens: string[] = [];

before(async () => {
  h = await startMonitor({ env: { PUSH_PORT: '0' } });
  const pushUrl = h.svc.pushUrl();
  assert.ok(pushUrl, 'the push listener is up');
  // The job's client: trusts the service's CA, has no client certificate.
  job = new HttpsClient(pushUrl, { ca: fs.readFileSync(path.join(h.dataDir, 'certs', 'ca.pem'), 'utf8') });
});
after(async () => {
  job?.close();
  await h?.stop();
});

async function create(name: string, extra: Record<string, string> = {}): Promise<string> {
  const r = await h.admin.request('POST', '/push/create', { body: { name, ...extra } });
  assert.equal(r.status, 201, r.text);
  const token = r.body.generated?.token as string;
  assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  assert.deepEqual(r.body.monitor.secretFieldsSet, ['token']);
  assert.ok(!JSON.stringify(r.body.monitor).includes(token));
  tokens.push(token);
  return token;
}

const details = async (name: string) =>
  (await h.admin.request('POST', '/getMonitorDetails', { body: { type: 'push', name, sched: '5MIN' } })).body;

/** Polls the monitor's details until `ok` holds (bound: 30 s; the machine is shared). */
async function until(name: string, ok: (d: any) => boolean, what: string): Promise<any> {
  const end = Date.now() + 30_000;
  for (;;) {
    const d = await details(name);
    if (ok(d)) return d;
    if (Date.now() > end) assert.fail(`${name}: ${what} not reached; last: ${JSON.stringify(d.last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a token is generated, never taken from the request, never listed', async () => {
  const bad = await h.admin.request('POST', '/push/create', { body: { name: 'p-own', token: 'mine' } });
  assert.equal(bad.status, 400, bad.text);
  const badPeriod = await h.admin.request('POST', '/push/create', { body: { name: 'p-bad', periodSeconds: '0' } });
  assert.equal(badPeriod.status, 400);
  assert.equal(badPeriod.body.field, 'body.periodSeconds');
  const token = await create('p-list', { periodSeconds: '3600' });
  const list = await h.admin.request('GET', '/monitors?type=push');
  assert.equal(list.status, 200);
  assert.ok(!list.text.includes(token));
  const d = await details('p-list');
  assert.ok(!JSON.stringify(d).includes(token));
  assert.equal(d.push.paths.start, '/push/<token>/start');
  assert.equal(typeof d.push.pushPort, 'number');
});

test('on time: a success ping makes it OK at once, without a client certificate', async () => {
  const token = await create('p-ontime', { periodSeconds: '3600' });
  const r = await job.request('GET', `/push/${token}`, { token: null });
  assert.equal(r.status, 200, r.text);
  const d = await until('p-ontime', (x) => x.last?.status === 'OK', 'OK');
  assert.ok(d.push.lastSuccessMs > 0);
  assert.equal(d.push.lastKind, 'success');
});

test('late: no ping within period + grace → DOWN, and a ping brings it back', async () => {
  const token = await create('p-late', { periodSeconds: '1', graceSeconds: '0' });
  assert.equal((await job.request('POST', `/push/${token}`, { token: null })).status, 200);
  const d = await until('p-late', (x) => x.last?.status === 'DOWN', 'DOWN (late)');
  assert.match(d.last.message, /^late: no ping since/);
  await h.admin.request('POST', '/push/update/5MIN/p-late', { body: { periodSeconds: '3600' } });
  assert.equal((await job.request('POST', `/push/${token}`, { token: null })).status, 200);
  await until('p-late', (x) => x.last?.status === 'OK', 'OK after the ping');
});

test('fail signal and exit codes: DOWN with the job message; exit code 0 is a success', async () => {
  const token = await create('p-fail', { periodSeconds: '3600' });
  const f = await job.request('POST', `/push/${token}/fail`, {
    rawBody: 'disk full\u0007 on /backup',
    headers: { 'content-type': 'text/plain' },
    token: null,
  });
  assert.equal(f.status, 200, f.text);
  let d = await until('p-fail', (x) => x.last?.status === 'DOWN', 'DOWN (fail)');
  assert.match(d.last.message, /job reported failure .*: disk full on \/backup$/);
  assert.equal((await job.request('POST', `/push/${token}/0`, { token: null })).status, 200);
  await until('p-fail', (x) => x.last?.status === 'OK', 'OK (exit 0)');
  const e = await job.request('POST', `/push/${token}/3`, {
    rawBody: 'rsync: error',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    token: null,
  });
  assert.equal(e.status, 200, e.text);
  d = await until('p-fail', (x) => x.last?.status === 'DOWN', 'DOWN (exit 3)');
  assert.match(d.last.message, /\(exit code 3\): rsync: error/);
  assert.equal((await job.request('GET', `/push/${token}/256`, { token: null })).status, 400);
  assert.equal((await job.request('GET', `/push/${token}/bogus`, { token: null })).status, 400);
  const big = await job.request('POST', `/push/${token}/fail`, { rawBody: 'x'.repeat(11 * 1024), token: null });
  assert.equal(big.status, 413, 'the body is bounded');
});

test('long-running job: start, then success much later → the duration is the response time', async () => {
  const token = await create('p-long', { periodSeconds: '3600' });
  assert.equal((await job.request('GET', `/push/${token}/start`, { token: null })).status, 200);
  await new Promise((r) => setTimeout(r, 1500));
  const d0 = await details('p-long');
  assert.equal(d0.push.lastKind, 'start');
  assert.equal((await job.request('GET', `/push/${token}`, { token: null })).status, 200);
  const d = await until('p-long', (x) => x.last?.status === 'OK', 'OK');
  assert.ok(d.last.responseTimeMs >= 1500, `duration ${d.last.responseTimeMs} ms`);
  assert.equal(d.push.lastDurationMs, d.last.responseTimeMs);
  const runs = d.recent as Array<{ metrics?: Record<string, number> }>;
  assert.ok(
    runs.some((x) => (x.metrics?.durationMs ?? 0) >= 1500),
    JSON.stringify(runs),
  );
});

test('rotation: a new token works, the old one is 404 at once; readonly may not rotate', async () => {
  const old = await create('p-rot', { periodSeconds: '3600' });
  const r = await h.admin.request('POST', '/push/rotate/5MIN/p-rot');
  assert.equal(r.status, 200, r.text);
  const fresh = r.body.generated.token as string;
  assert.notEqual(fresh, old);
  tokens.push(fresh);
  assert.equal((await job.request('GET', `/push/${old}`, { token: null })).status, 404);
  assert.equal((await job.request('GET', `/push/${fresh}`, { token: null })).status, 200);
  const ro = h.client();
  await h.admin.request('POST', '/api/users', {
    body: { username: 'ro-push', password: 'ro-push-pass-1234', group: 'readonly' },
  });
  await ro.login('ro-push', 'ro-push-pass-1234');
  assert.equal((await ro.request('POST', '/push/rotate/5MIN/p-rot')).status, 403);
  assert.equal((await h.admin.request('POST', '/tcp/rotate/5MIN/p-rot')).status, 404, 'only push has a rotation');
});

test('flood: the token is rate-limited (429 + Retry-After), the service stays responsive', async () => {
  const token = await create('p-flood', { periodSeconds: '3600' });
  const other = await create('p-calm', { periodSeconds: '3600' });
  const answers = await Promise.all(
    Array.from({ length: 200 }, () => job.request('POST', `/push/${token}`, { token: null })),
  );
  const limited = answers.filter((a) => a.status === 429);
  assert.ok(limited.length >= 150, `${limited.length} of 200 limited`);
  assert.ok(answers.every((a) => a.status === 200 || a.status === 429));
  assert.match(String(limited[0]!.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal((await h.admin.request('GET', '/ping')).status, 200, 'the main port answers');
  assert.equal((await job.request('POST', `/push/${other}`, { token: null })).status, 200, 'per token');
  await until('p-flood', (x) => x.last?.status === 'OK', 'OK');
});

test('the push listener serves the ping routes only; unknown tokens are 404', async () => {
  for (const p of ['/monitors', '/ping', '/docs/index.html', '/docs/index.html/json', '/api/metrics', '/'])
    assert.equal((await job.request('GET', p, { token: null })).status, 404, p);
  assert.equal(
    (await job.request('POST', '/login', { body: { username: 'admin', password: 'x' }, token: null })).status,
    404,
  );
  assert.equal((await job.request('POST', '/push/create', { body: { name: 'x' }, token: null })).status, 404);
  const unknown = await job.request('GET', `/push/${'A'.repeat(43)}`, { token: null });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.message, 'no push monitor with this token');
});

test("GET /reloadCertificates swaps the push listener's certificate too", async () => {
  const certDir = path.join(h.dataDir, 'certs');
  const files = certsFrom(certDir);
  const ca = { cert: files.ca, key: fs.readFileSync(path.join(certDir, 'ca-key.pem'), 'utf8') };
  const fresh = await issueCert(ca, {
    commonName: 'localhost',
    kind: 'server',
    dnsNames: ['localhost'],
    ips: ['127.0.0.1'],
  });
  const pushUrl = h.svc.pushUrl()!;
  assert.notEqual(await peerSerial(pushUrl, files), new X509Certificate(fresh.cert).serialNumber);
  fs.writeFileSync(path.join(certDir, 'server-key.pem'), fresh.key, { mode: 0o600 });
  fs.writeFileSync(path.join(certDir, 'server.pem'), fresh.cert);
  assert.equal((await h.admin.request('GET', '/reloadCertificates')).status, 200);
  assert.equal(await peerSerial(pushUrl, files), new X509Certificate(fresh.cert).serialNumber);
  assert.equal((await job.request('GET', `/push/${'A'.repeat(43)}`, { token: null })).status, 404, 'still serving');
});

test('no token in the service log', async () => {
  const dir = path.join(h.dataDir, 'logs');
  const text = fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  for (const t of tokens) assert.ok(!text.includes(t), 'a token is in the log');
});
