/**
 * Issue 14 §2: an empty body sent with `Content-Type: application/json` is a request without a body. Routes that
 * take none (timelineGraph, /exec/enable, the agent's /computeThreshold) answer as without the header; a route that
 * needs a body answers 400 naming it (not a parser error); malformed JSON stays a 400.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, type AgentHarness } from '../support/agent.harness.js';
import { assertError } from '../support/api.kit.js';

let m: MonitorHarness;
let a: AgentHarness;
const json = { 'content-type': 'application/json' };

before(async () => {
  [m, a] = await Promise.all([startMonitor(), startAgent()]);
  const r = await m.admin.request('POST', '/tcp/create', {
    body: { name: 'eb-tcp', ip: '127.0.0.1', port: '9', state: 'off' },
  });
  assert.equal(r.status, 201, r.text);
});
after(async () => {
  await Promise.all([m?.stop(), a?.close()]);
});

for (const rawBody of ['', ' \r\n']) {
  const label = rawBody ? 'whitespace' : 'empty';
  test(`monitor: ${label} JSON body on timelineGraph and /exec/enable → 200`, async () => {
    const now = Date.now();
    const t = await m.admin.request('POST', `/timelineGraph/tcp/eb-tcp/${now - 3_600_000}/${now}`, {
      rawBody,
      headers: json,
    });
    assert.equal(t.status, 200, t.text);
    const e = await m.admin.request('POST', '/exec/enable/5MIN/eb-tcp', { rawBody, headers: json });
    assert.equal(e.status, 200, e.text);
    assert.equal(e.body.monitor.state, 'on');
    await m.admin.request('POST', '/exec/disable/5MIN/eb-tcp', { rawBody, headers: json });
  });

  test(`agent: ${label} JSON body on /computeThreshold → 200`, async () => {
    const r = await a.admin.request('POST', '/computeThreshold', { rawBody, headers: json });
    assert.equal(r.status, 200, r.text);
  });
}

test('a route that needs a body answers 400 naming body for an empty JSON body; bad JSON stays 400', async () => {
  assertError(await m.admin.request('POST', '/tcp/create', { rawBody: '', headers: json }), 400, 'body');
  assertError(await a.admin.request('POST', '/updateSetting', { rawBody: '', headers: json }), 400, 'body');
  assertError(await m.admin.request('POST', '/tcp/create', { rawBody: '{"name":', headers: json }), 400);
  const proto = await m.admin.request('POST', '/tcp/create', {
    rawBody: '{"__proto__":{"x":1},"name":"p"}',
    headers: json,
  });
  assertError(proto, 400);
});
