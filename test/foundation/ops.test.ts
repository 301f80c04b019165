/** /ping, /uptime, /getCert on the real monitor service (mTLS cases: mtls.test.ts). */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { assertError, userClient } from '../support/api.kit.js';

let h: MonitorHarness;

before(async () => {
  h = await startMonitor();
});
after(async () => h?.stop());

test('GET /ping → {"message":"pong"} with or without a token', async () => {
  for (const token of [null, h.admin.token!]) {
    const r = await h.admin.request('GET', '/ping', { token });
    assert.equal(r.status, 200);
    assert.equal(r.text, '{"message":"pong"}');
  }
});

test('GET /uptime: started time, uptime in ms and as text; readonly may read it; 401 without a token', async () => {
  const t0 = Date.now();
  const r = await h.admin.request('GET', '/uptime');
  assert.equal(r.status, 200, r.text);
  assert.ok(r.body.startedMs <= t0 && r.body.startedMs > t0 - 600_000, `startedMs ${r.body.startedMs}`);
  assert.ok(r.body.uptimeMs >= 0);
  assert.match(r.body.uptime, /^\d+d \d+h \d+m \d+s$/);
  await new Promise((res) => setTimeout(res, 20));
  const r2 = await h.admin.request('GET', '/uptime');
  assert.equal(r2.body.startedMs, r.body.startedMs);
  assert.ok(r2.body.uptimeMs > r.body.uptimeMs);
  const ro = await userClient(h, 'ops-ro', 'readonly');
  assert.equal((await ro.request('GET', '/uptime')).status, 200);
  assertError(await h.admin.request('GET', '/uptime', { token: null }), 401);
});

test('GET /getCert: a PEM download, no token needed', async () => {
  const r = await h.admin.request('GET', '/getCert', { token: null });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-disposition']), /server\.pem/);
  assert.match(r.text, /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
  assert.doesNotMatch(r.text, /PRIVATE KEY/);
});
