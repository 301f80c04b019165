/**
 * docs/security.md §4 (review F4): api `clientCert`/`clientCertKey` cannot make the service read a server path. Through
 * the HTTP API as a `user`: /etc/passwd, /dev/zero, a FIFO, `..` and a symlink out of <DATA_DIR>/client-certs/ are
 * refused at create (one generic message for everything inside the folder, so nothing tells whether a path exists);
 * records stored by an older version with such paths run EXCEPTION without touching them, and logins keep answering
 * (on the code before the fix a FIFO took the libuv threads and logins hung). PEM text works and is never shown.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startMonitor, ADMIN_PASSWORD, type MonitorHarness } from '../support/monitor.harness.js';
import { startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';
import type { HttpsClient } from '../support/https-client.kit.js';

let h: MonitorHarness;
let t: HttpTargets;
let bob: HttpsClient;
let certDir: string;

async function loginBob(): Promise<HttpsClient> {
  const c = h.client();
  await c.login('bob', 'Bob-pass-123');
  return c;
}

before(async () => {
  [h, t] = await Promise.all([startMonitor(), startHttpTargets()]);
  const u = await h.admin.request('POST', '/api/users', {
    body: { username: 'bob', password: 'Bob-pass-123', group: 'user', enabled: 'true' },
  });
  assert.equal(u.status, 201, u.text);
  bob = await loginBob();
  certDir = path.join(h.dataDir, 'client-certs');
  fs.mkdirSync(certDir, { mode: 0o700 });
  fs.copyFileSync(t.certs.clientCertPath, path.join(certDir, 'client.pem'));
  execFileSync('mkfifo', [path.join(h.dataDir, 'fifo'), path.join(certDir, 'in.fifo')]);
  fs.symlinkSync('/etc/passwd', path.join(certDir, 'out.pem'));
});
after(async () => {
  await h?.stop();
  await t?.close();
});

const base = { sched: '60MIN', state: 'off', probe: 'p1', display_name: 'x', typeApi: 'GET', timeout: '3' };

test('server paths, devices, FIFOs and escapes are refused at create with the field named', async () => {
  const key = fs.readFileSync(t.certs.clientKeyPath, 'utf8');
  const cases: [string, string, RegExp][] = [
    ['/etc/passwd', 'body.clientCert', /PEM text itself .* other server paths are not read/],
    ['/dev/zero', 'body.clientCert', /PEM text itself/],
    [path.join(h.dataDir, 'fifo'), 'body.clientCert', /PEM text itself/],
    ['../monitor-jwt-key.pem', 'body.clientCert', /PEM text itself/],
    ['in.fifo', 'body.clientCert', /no readable regular file of at most 64 KiB named "in\.fifo"/],
    ['out.pem', 'body.clientCert', /no readable regular file of at most 64 KiB named "out\.pem"/],
    ['absent.pem', 'body.clientCert', /no readable regular file of at most 64 KiB named "absent\.pem"/],
  ];
  for (const [i, [value, field, msg]] of cases.entries()) {
    const r = await bob.request('POST', '/api/create', {
      body: { ...base, name: `cc-bad-${i}`, api: `${t.httpsUrl}/mtls`, clientCert: value, clientCertKey: key },
    });
    assert.equal(r.status, 400, `${value}: ${r.text}`);
    assert.equal(r.body.field, field, value);
    assert.match(r.body.message, msg, value);
  }
  const login = await h.client().request('POST', '/login', {
    body: { username: 'admin', password: ADMIN_PASSWORD },
    token: null,
  });
  assert.equal(login.status, 200, 'logins answer');
});

test('PEM text and a file name in client-certs/ authenticate; the PEM is never returned', async () => {
  const cert = fs.readFileSync(t.certs.clientCertPath, 'utf8');
  const key = fs.readFileSync(t.certs.clientKeyPath, 'utf8');
  const pemBody = { ...base, name: 'cc-pem', api: `${t.httpsUrl}/mtls`, ignoreTlsErrors: 'true' };
  const c = await bob.request('POST', '/api/create', { body: { ...pemBody, clientCert: cert, clientCertKey: key } });
  assert.equal(c.status, 201, c.text);
  assert.ok(!c.text.includes('PRIVATE KEY'), 'the key is not echoed');
  assert.deepEqual(c.body.monitor.secretFieldsSet.sort(), ['clientCert', 'clientCertKey']);
  const r = await bob.request('GET', '/monitor/run/cc-pem/show');
  assert.equal(r.body.status, 'OK', r.text);
  const list = await bob.request('GET', '/monitors');
  assert.ok(!list.text.includes('PRIVATE KEY') && !list.text.includes('BEGIN CERTIFICATE'));

  const f = await bob.request('POST', '/api/create', {
    body: { ...pemBody, name: 'cc-file', clientCert: 'client.pem', clientCertKey: key },
  });
  assert.equal(f.status, 201, f.text);
  assert.equal((await bob.request('GET', '/monitor/run/cc-file/show')).body.status, 'OK');
});

test(
  'records stored by an older version with server paths run EXCEPTION without reading them; logins answer',
  { timeout: 120_000 },
  async () => {
    const legacy = (name: string, p: string) => ({
      name,
      type: 'api',
      config: { ...base, api: `${t.httpsUrl}/mtls`, clientCert: p, clientCertKey: p },
      createdMs: Date.now(),
      updatedMs: Date.now(),
    });
    const store = h.svc.platform.store.bucket('monitors');
    const fifo = path.join(h.dataDir, 'fifo');
    await store.put('legacy-fifo-1', legacy('legacy-fifo-1', fifo));
    await store.put('legacy-fifo-2', legacy('legacy-fifo-2', fifo));
    await store.put('legacy-passwd', legacy('legacy-passwd', '/etc/passwd'));
    await store.put('legacy-zero', legacy('legacy-zero', '/dev/zero'));
    const dataDir = h.dataDir;
    await h.stop({ keepData: true });
    h = await startMonitor({ dataDir });
    bob = await loginBob();
    // The review's thread-pool hang: two runs whose certificate and key are a FIFO.
    const runs = await Promise.all([1, 2].map((i) => bob.request('GET', `/monitor/run/legacy-fifo-${i}/show`)));
    for (const r of runs) {
      assert.equal(r.body.status, 'EXCEPTION', r.text);
      assert.match(r.body.message, /^clientCert must be the PEM text itself/);
      assert.ok(!r.text.includes(fifo), 'the path is not echoed');
    }
    const login = await h.client().request('POST', '/login', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
      token: null,
    });
    assert.equal(login.status, 200, 'logins answer after the FIFO runs');
    // The existence oracle and /dev/zero: the same EXCEPTION, nothing opened.
    for (const n of ['legacy-passwd', 'legacy-zero']) {
      const r = await bob.request('GET', `/monitor/run/${n}/show`);
      assert.equal(r.body.status, 'EXCEPTION', r.text);
      assert.match(r.body.message, /^clientCert must be the PEM text itself/);
    }
  },
);
