import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startHttpTargets, type HttpTargets } from '../../../../test/support/http-targets.fixture.js';
import { createNetworkPolicy } from './network-policy.js';
import { probeHttp, redactUrl, type ProbeRequest } from './http-probe.js';
import { certLevel } from './http-probe-support.js';

let t: HttpTargets;
before(async () => {
  t = await startHttpTargets();
});
after(async () => {
  await t.close();
});

function probe(req: Partial<ProbeRequest> & { url: string }) {
  return probeHttp({ signal: AbortSignal.timeout(5000), policy: createNetworkPolicy(), timeoutMs: 5000, ...req });
}

describe('http probe', () => {
  it('verifies TLS against a given CA: trusted → ok with tls timing and cert facts', async () => {
    const r = await probe({ url: `${t.httpsUrl}/ok`, ca: t.certs.caPem });
    assert.ok(r.ok, !r.ok ? r.message : '');
    assert.equal(r.statusCode, 200);
    assert.equal(typeof r.timings.tlsMs, 'number');
    assert.equal(r.certs.length, 1);
    assert.equal(r.certs[0]!.subject, 'localhost');
    assert.equal(r.certs[0]!.issuer, 'Test CA');
  });

  it('by host name too (SNI + SAN DNS:localhost)', async () => {
    const r = await probe({ url: `https://localhost:${t.httpsPort}/ok`, ca: t.certs.caPem });
    assert.ok(r.ok, !r.ok ? r.message : '');
  });

  it('303 → GET without body; 307 keeps POST and body; 302 after POST → GET', async () => {
    for (const [code, method, body] of [
      [303, 'GET', ''],
      [307, 'POST', 'payload'],
      [302, 'GET', ''],
    ] as const) {
      const r = await probe({
        url: `${t.httpUrl}/redirect?to=/echo&code=${code}`,
        method: 'POST',
        body: 'payload',
        headers: { 'content-type': 'text/plain' },
      });
      assert.ok(r.ok);
      const echo = JSON.parse(r.body.toString()) as { method: string; body: string; headers: Record<string, string> };
      assert.equal(echo.method, method, String(code));
      assert.equal(echo.body, body, String(code));
      if (method === 'GET') assert.equal(echo.headers['content-type'], undefined);
    }
  });

  it('a custom body cap bounds memory on a never-ending body', async () => {
    const r = await probe({ url: `${t.httpUrl}/huge`, bodyCapBytes: 10_000 });
    assert.ok(r.ok);
    assert.equal(r.body.length, 10_000);
    assert.equal(r.bodyTruncated, true);
  });

  it('an already-aborted signal → down timeout, nothing sent', async () => {
    const before = t.received.length;
    const ac = new AbortController();
    ac.abort();
    const r = await probeHttp({
      url: `${t.httpUrl}/ok`,
      signal: ac.signal,
      policy: createNetworkPolicy(),
      timeoutMs: 1,
    });
    assert.ok(!r.ok && r.outcome === 'down' && r.message === 'timeout after 1 ms');
    assert.equal(t.received.length, before);
  });

  it('a URL that is not http(s) → exception, never a throw', async () => {
    for (const url of ['ftp://127.0.0.1/', 'not a url']) {
      const r = await probe({ url });
      assert.ok(!r.ok && r.outcome === 'exception', url);
    }
  });

  it('redactUrl drops userinfo', () => {
    assert.equal(redactUrl('http://u:p@h:1/x?y=1'), 'http://h:1/x?y=1');
  });

  it('certLevel thresholds', () => {
    const day = 86_400_000;
    assert.deepEqual(certLevel(100 * day, 0), { daysLeft: 100 });
    assert.equal(certLevel(29.9 * day, 0).severity, 'MINOR');
    assert.equal(certLevel(13 * day, 0).severity, 'MAJOR');
    assert.equal(certLevel(6.5 * day, 0).severity, 'CRITICAL');
    assert.equal(certLevel(-1 * day, 0).severity, 'CRITICAL');
    assert.ok(certLevel(-1 * day, 0).daysLeft < 0);
  });
});
