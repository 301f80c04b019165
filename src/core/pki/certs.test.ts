import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { after, test } from 'node:test';
import { CERT_FILES, createPki, ensureCertificates, issueCert } from './certs.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'certs-unit-'));
  dirs.push(d);
  return path.join(d, 'certs');
};

test('ensureCertificates writes every file once (keys 0600) with the right SANs and usages; concurrent calls agree', async () => {
  const dir = tmp();
  const [a, b] = await Promise.all([ensureCertificates(dir), ensureCertificates(dir)]);
  assert.ok(a.created || b.created);
  const f = (n: string) => path.join(dir, n);
  for (const n of Object.values(CERT_FILES)) assert.ok(fs.existsSync(f(n)), n);
  for (const n of [
    CERT_FILES.caKey,
    CERT_FILES.serverKey,
    CERT_FILES.clientKey,
    CERT_FILES.clientP12,
    CERT_FILES.clientP12Password,
  ]) {
    assert.equal(fs.statSync(f(n)).mode & 0o777, 0o600, `${n} is 0600`);
  }
  assert.ok(!fs.existsSync(f('.generating')));
  const ca = new X509Certificate(fs.readFileSync(f(CERT_FILES.ca)));
  const server = new X509Certificate(fs.readFileSync(f(CERT_FILES.server)));
  const client = new X509Certificate(fs.readFileSync(f(CERT_FILES.client)));
  assert.ok(ca.ca);
  assert.ok(server.verify(ca.publicKey) && client.verify(ca.publicKey));
  assert.ok(server.checkHost('localhost'));
  assert.ok(server.checkIP('127.0.0.1'));
  assert.ok(server.checkIP('::1'));
  if (os.hostname() && os.hostname() !== 'localhost')
    assert.ok(server.checkHost(os.hostname()), 'the host name is a SAN');
  assert.deepEqual(server.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.deepEqual(client.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  assert.ok(
    server.checkPrivateKey(
      await import('node:crypto').then((c) => c.createPrivateKey(fs.readFileSync(f(CERT_FILES.serverKey)))),
    ),
  );
  // The PKCS#12 bundle opens with its password.
  tls.createSecureContext({
    pfx: fs.readFileSync(f(CERT_FILES.clientP12)),
    passphrase: fs.readFileSync(f(CERT_FILES.clientP12Password), 'utf8').trim(),
  });
  // Nothing is regenerated on a second start.
  const before = fs.readFileSync(f(CERT_FILES.ca), 'utf8');
  assert.deepEqual(await ensureCertificates(dir), { created: false });
  assert.equal(fs.readFileSync(f(CERT_FILES.ca), 'utf8'), before);
});

test('a user-supplied CA is kept and missing files are issued from it', async () => {
  const dir = tmp();
  fs.mkdirSync(dir, { recursive: true });
  const own = await createPki();
  fs.writeFileSync(path.join(dir, CERT_FILES.ca), own.ca.cert);
  fs.writeFileSync(path.join(dir, CERT_FILES.caKey), own.ca.key, { mode: 0o600 });
  assert.equal((await ensureCertificates(dir)).created, true);
  assert.equal(fs.readFileSync(path.join(dir, CERT_FILES.ca), 'utf8'), own.ca.cert);
  const server = new X509Certificate(fs.readFileSync(path.join(dir, CERT_FILES.server)));
  assert.ok(server.verify(new X509Certificate(own.ca.cert).publicKey));
});

test('issueCert honours validity options; createPki builds a chain Node accepts', async () => {
  const pki = await createPki({ hostNames: ['mon.example.test'] });
  const s = new X509Certificate(pki.server.cert);
  assert.ok(s.checkHost('mon.example.test'));
  const t0 = Date.UTC(2020, 0, 1);
  const old = new X509Certificate(
    (await issueCert(pki.ca, { commonName: 'old', kind: 'client', notBeforeMs: t0, days: 10 })).cert,
  );
  assert.equal(Date.parse(old.validFrom), t0);
  assert.equal(Date.parse(old.validTo), t0 + 10 * 86_400_000);
  tls.createSecureContext({ key: pki.server.key, cert: pki.server.cert, ca: pki.ca.cert });
});
