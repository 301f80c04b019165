/**
 * The agent's bucket reads through the HTTP API: an existing but empty data bucket answers {} (not 404), and the
 * documented key form `<name>_cpu` works in every bucket, the series buckets answering the latest point.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startAgent, type AgentHarness } from '../../../test/support/agent.harness.js';

let h: AgentHarness;
before(async () => {
  h = await startAgent();
});
after(async () => h?.close());

test('an empty data bucket answers {}; a bucket that is not one of the four stays 404', async () => {
  for (const b of ['THRESHOLDS', 'STATUS_HISTORY', 'METRICS', 'STATUS']) {
    const r = await h.admin.request('GET', `/v1/db/discovery/bucket/${b}/allJSON`);
    assert.equal(r.status, 200, `${b}: ${r.text}`);
    assert.deepEqual(r.body, {});
  }
  assert.equal((await h.admin.request('GET', '/v1/db/discovery/bucket/users/allJSON')).status, 404);
  assert.equal((await h.admin.request('GET', '/v1/db/discovery/bucket/NOPE/allJSON')).status, 404);
});

test('METRICS/key/system_cpu is the latest point; <key>:<timeMs> a given point; STATUS by the same key', async () => {
  assert.equal((await h.admin.request('GET', '/api/db/discovery/bucket/METRICS/key/system_cpu')).status, 404);
  for (let i = 0; i < 2; i++) assert.equal((await h.admin.request('GET', '/runDiscovery')).status, 200);
  const all = (await h.admin.request('GET', '/v1/db/discovery/bucket/METRICS/allJSON')).body as Record<string, number>;
  const times = Object.keys(all)
    .filter((k) => k.startsWith('system_cpu:'))
    .map((k) => Number(k.split(':')[1]))
    .sort((a, b) => a - b);
  assert.equal(times.length, 2, 'one point per cycle');
  const r = await h.admin.request('GET', '/api/db/discovery/bucket/METRICS/key/system_cpu');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.bucket, 'METRICS');
  assert.equal(r.body.key, 'system_cpu');
  assert.equal(r.body.timeMs, times[1], 'the latest of the two cycles');
  assert.equal(r.body.value, all[`system_cpu:${times[1]}`]);
  const point = await h.admin.request('GET', `/api/db/discovery/bucket/METRICS/key/system_cpu:${times[0]}`);
  assert.equal(point.body.value, all[`system_cpu:${times[0]}`]);
  assert.equal(point.body.timeMs, undefined);
  const status = await h.admin.request('GET', '/api/db/discovery/bucket/STATUS/key/system_cpu');
  assert.equal(status.status, 200, status.text);
  assert.equal(typeof status.body.value.status, 'string');
  assert.equal((await h.admin.request('GET', '/api/db/discovery/bucket/METRICS/key/nothing_cpu')).status, 404);
  assert.equal(
    (await h.admin.request('GET', '/api/db/discovery/bucket/METRICS/key/system_cp')).status,
    404,
    'no prefix match',
  );
});
