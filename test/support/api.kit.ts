/** Shared bits of the foundation integration tests (test/foundation/*.test.ts). */
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import type { MonitorHarness } from './monitor.harness.js';
import type { HttpsClient, Res } from './https-client.kit.js';

export type Group = 'admin' | 'user' | 'readonly';

/** Creates a user through the API and returns a client logged in as that user. */
export async function userClient(
  h: MonitorHarness,
  username: string,
  group: Group,
  password = `${username}-pass-123`,
): Promise<HttpsClient> {
  const r = await h.admin.request('POST', '/api/users', {
    body: { username, password, group, email: `${username}@example.com` },
  });
  assert.equal(r.status, 201, r.text);
  const c = h.client();
  await c.login(username, password);
  return c;
}

/** Asserts the one error body shape and the status. */
export function assertError(r: Res, status: number, fieldOrText?: string): void {
  assert.equal(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
  assert.equal(typeof r.body, 'object', `error body is JSON: ${r.text}`);
  assert.equal(r.body.code, status);
  assert.equal(typeof r.body.error, 'string');
  assert.equal(typeof r.body.message, 'string');
  assert.ok(!/\bat .+:\d+:\d+/.test(r.text), `no stack trace in ${r.text}`);
  if (fieldOrText) assert.ok(r.text.includes(fieldOrText), `error names ${fieldOrText}: ${r.text}`);
}

/** One HTTPS request with explicit TLS material; resolves the status or rejects with the TLS/socket error. */
export function rawRequest(
  url: string,
  p: string,
  tlsOpts: { ca: string; cert?: string; key?: string; agent?: https.Agent | false },
): Promise<{ status: number; body: string; serial?: string }> {
  const u = new URL(p, url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      u,
      { method: 'GET', ca: tlsOpts.ca, cert: tlsOpts.cert, key: tlsOpts.key, agent: tlsOpts.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        const serial = (res.socket as tls.TLSSocket).getPeerCertificate?.()?.serialNumber;
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), serial }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The serial number (upper-case hex, as Node reports it) of the certificate a fresh TLS connection is shown. */
export function peerSerial(url: string, t: { ca: string; cert: string; key: string }): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = tls.connect(
      { host: u.hostname, port: Number(u.port), ca: t.ca, cert: t.cert, key: t.key, servername: 'localhost' },
      () => {
        const serial = s.getPeerCertificate().serialNumber;
        s.end();
        resolve(serial);
      },
    );
    s.on('error', reject);
  });
}
