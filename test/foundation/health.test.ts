/**
 * GET /healthz and /readyz on both services: no bearer token needed, mutual TLS still required, minimal bodies,
 * 503 naming the failing part (a store that stops answering; a service shutting down), and both in the OpenAPI.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, type AgentHarness } from '../support/agent.harness.js';
import { rawRequest } from '../support/api.kit.js';

let h: MonitorHarness;
let a: AgentHarness;
before(async () => {
  h = await startMonitor();
  a = await startAgent();
});
after(async () => {
  await h?.stop();
  await a?.close();
});

const READY_CHECKS = ['store', 'migrations', 'certificates', 'scheduler', 'serving'];

test('both services answer /healthz and /readyz without a token, listing only check names and ok/fail', async () => {
  for (const [label, c] of [
    ['monitor', h.admin],
    ['agent', a.admin],
  ] as const) {
    const live = await c.request('GET', '/healthz', { token: null });
    assert.equal(live.status, 200, `${label} /healthz: ${live.text}`);
    assert.equal(live.body.status, 'ok');
    assert.equal(typeof live.body.eventLoopLagMs, 'number');
    const ready = await c.request('GET', '/readyz', { token: null });
    assert.equal(ready.status, 200, `${label} /readyz: ${ready.text}`);
    assert.deepEqual(ready.body, {
      status: 'ok',
      failing: [],
      checks: Object.fromEntries(READY_CHECKS.map((n) => [n, 'ok'])),
    });
  }
});

test('mutual TLS still applies to the probes: a client without a certificate is refused at the handshake', async () => {
  const ca = fs.readFileSync(path.join(h.dataDir, 'certs', 'ca.pem'), 'utf8');
  for (const url of [h.url, a.url]) {
    await assert.rejects(rawRequest(url, '/healthz', { ca }));
    await assert.rejects(rawRequest(url, '/readyz', { ca }));
  }
});

test('/readyz is 503 naming the store when the store stops answering, and ok again when it is back', async () => {
  const store = h.svc.platform.store;
  const bucket = store.bucket.bind(store);
  store.bucket = () => {
    throw new Error('store unreachable (test)');
  };
  try {
    const r = await h.admin.request('GET', '/readyz', { token: null });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.status, 'fail');
    assert.deepEqual(r.body.failing, ['store']);
    assert.ok(!r.text.includes('unreachable'), 'no error text in the unauthenticated answer');
  } finally {
    store.bucket = bucket;
  }
  assert.equal((await h.admin.request('GET', '/readyz', { token: null })).status, 200);
});

test('a service that began shutting down is not ready ("serving"), while still alive', async () => {
  a.svc.platform.beginShutdown();
  const r = await a.admin.request('GET', '/readyz', { token: null });
  assert.equal(r.status, 503, r.text);
  assert.deepEqual(r.body.failing, ['serving']);
  assert.equal((await a.admin.request('GET', '/healthz', { token: null })).status, 200);
});

test('the probes are in both OpenAPI documents with their 503 answers', async () => {
  for (const c of [h.admin, a.admin]) {
    const doc = (await c.request('GET', '/docs/index.html/json', { token: null })).body;
    for (const p of ['/healthz', '/readyz']) {
      assert.ok(doc.paths[p]?.get, `${p} documented`);
      assert.ok(doc.paths[p].get.responses['503'], `${p} documents 503`);
      assert.equal(doc.paths[p].get.security, undefined, `${p} needs no bearer token`);
    }
  }
});

test('a stalled event loop makes /healthz 503 with the lag it saw (the last test here: it stalls the process)', async () => {
  const until = Date.now() + 5_800;
  while (Date.now() < until) {
    /* the stall: nothing else runs in this process for 5.8 s */
  }
  const r = await h.admin.request('GET', '/healthz', { token: null });
  assert.equal(r.status, 503, r.text);
  assert.equal(r.body.status, 'fail');
  assert.ok(r.body.eventLoopLagMs >= 5000, `lag ${r.body.eventLoopLagMs} ms`);
});
