/**
 * Mutual TLS on the real monitor service: no client certificate or one from another CA is refused at the handshake;
 * /reloadCertificates swaps the server certificate with requests hammering on keep-alive and new connections (none
 * fails, new connections see the new serial); unusable files → 400 and the old context keeps serving; /getCert, /ping.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createPki, issueCert } from '../../src/core/pki/certs.js';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { certsFrom } from '../support/https-client.kit.js';
import { assertError, peerSerial, rawRequest, userClient } from '../support/api.kit.js';

let h: MonitorHarness;
let certDir: string;

before(async () => {
  h = await startMonitor();
  certDir = path.join(h.dataDir, 'certs');
});
after(async () => h?.stop());

test('GET /ping answers pong with the client certificate and no token', async () => {
  const r = await h.admin.request('GET', '/ping', { token: null });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { message: 'pong' });
});

test('a client without a certificate is refused at the handshake', async () => {
  const { ca } = certsFrom(certDir);
  await assert.rejects(rawRequest(h.url, '/ping', { ca }), (e: NodeJS.ErrnoException) => {
    assert.match(String(e.code ?? e.message), /CERTIFICATE_REQUIRED|ECONNRESET|EPIPE|HANDSHAKE/i);
    return true;
  });
});

test('a client certificate from another CA is refused at the handshake', async () => {
  const other = await createPki();
  const { ca } = certsFrom(certDir);
  await assert.rejects(
    rawRequest(h.url, '/ping', { ca, cert: other.client.cert, key: other.client.key }),
    (e: NodeJS.ErrnoException) => {
      assert.match(String(e.code ?? e.message), /UNKNOWN_CA|ECONNRESET|EPIPE|BAD_CERTIFICATE|DECRYPT/i);
      return true;
    },
  );
  // The same untrusted certificate presented on a keep-alive agent: still no HTTP answer.
  const agent = new https.Agent({ keepAlive: true, ca, cert: other.client.cert, key: other.client.key });
  await assert.rejects(rawRequest(h.url, '/ping', { ca, agent }));
  agent.destroy();
});

test('GET /getCert serves server.pem (PEM) without a token', async () => {
  const r = await h.admin.request('GET', '/getCert', { token: null });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /pem/);
  assert.equal(r.text, fs.readFileSync(path.join(certDir, 'server.pem'), 'utf8'));
  assert.match(r.text, /^-----BEGIN CERTIFICATE-----/);
});

test('/reloadCertificates swaps the certificate with no failed request in flight', async () => {
  const files = certsFrom(certDir);
  const ca = { cert: files.ca, key: fs.readFileSync(path.join(certDir, 'ca-key.pem'), 'utf8') };
  const fresh = await issueCert(ca, {
    commonName: 'localhost',
    kind: 'server',
    dnsNames: ['localhost'],
    ips: ['127.0.0.1', '::1'],
  });
  const newSerial = new X509Certificate(fresh.cert).serialNumber;
  const oldSerial = await peerSerial(h.url, files);
  assert.notEqual(newSerial, oldSerial);

  let stop = false;
  let ok = 0;
  const failures: string[] = [];
  const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 4, ca: files.ca, cert: files.cert, key: files.key });
  const worker = async (agent: https.Agent | false) => {
    while (!stop) {
      try {
        const r = await rawRequest(h.url, '/ping', { ...files, agent });
        if (r.status === 200) ok++;
        else failures.push(`status ${r.status}`);
      } catch (e) {
        failures.push(String((e as Error).message));
      }
    }
  };
  const workers = [
    worker(keepAlive),
    worker(keepAlive),
    worker(keepAlive),
    worker(keepAlive),
    worker(false),
    worker(false),
  ];
  await new Promise((r) => setTimeout(r, 300));
  const before = ok;
  fs.writeFileSync(path.join(certDir, 'server-key.pem'), fresh.key, { mode: 0o600 });
  fs.writeFileSync(path.join(certDir, 'server.pem'), fresh.cert);
  const r = await h.admin.request('GET', '/reloadCertificates');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.code, 200);
  assert.match(r.body.subject, /CN=localhost/);
  assert.ok(!Number.isNaN(Date.parse(r.body.notAfter)));
  await new Promise((res) => setTimeout(res, 400));
  stop = true;
  await Promise.all(workers);
  keepAlive.destroy();
  assert.deepEqual(failures, []);
  assert.ok(before > 0 && ok > before, `requests kept flowing (${before} before, ${ok} in all)`);
  assert.equal(await peerSerial(h.url, files), newSerial, 'a new connection sees the new certificate');
  const pem = await h.admin.request('GET', '/getCert', { token: null });
  assert.equal(pem.text, fresh.cert);
});

test('unusable certificate files → 400 naming the problem; the old context keeps serving', async () => {
  const files = certsFrom(certDir);
  const serverPem = path.join(certDir, 'server.pem');
  const good = fs.readFileSync(serverPem, 'utf8');
  const serialBefore = await peerSerial(h.url, files);
  try {
    fs.writeFileSync(serverPem, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
    const r = await h.admin.request('GET', '/reloadCertificates');
    assertError(r, 400, 'certificates');
    // A certificate that does not belong to the key.
    const other = await createPki();
    fs.writeFileSync(serverPem, other.server.cert);
    assertError(await h.admin.request('GET', '/reloadCertificates'), 400);
    const ping = await rawRequest(h.url, '/ping', files);
    assert.equal(ping.status, 200);
    assert.equal(await peerSerial(h.url, files), serialBefore);
  } finally {
    fs.writeFileSync(serverPem, good);
  }
  assert.equal((await h.admin.request('GET', '/reloadCertificates')).status, 200);
});

test('/reloadCertificates needs a token and the admin group', async () => {
  assertError(await h.admin.request('GET', '/reloadCertificates', { token: null }), 401);
  const ro = await userClient(h, 'ro-mtls', 'readonly');
  assertError(await ro.request('GET', '/reloadCertificates'), 403);
});
