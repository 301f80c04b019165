/**
 * POST /computeThreshold with seeded history: a stored baseline that status evaluation uses when the group's fixed
 * thresholds are unset (and not when they are set); too little history is reported as not computed. Graph routes:
 * 400 for non-numeric or reversed ranges, downsampled output bounded.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type { BatchOp } from '../../core/storage/kv-store.js';
import { startAgent, type AgentHarness } from '../../../test/support/agent.harness.js';

let h: AgentHarness;
let server: Server;
let port: number;
const sockets = new Set<Socket>();

before(async () => {
  h = await startAgent();
  server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as { port: number }).port;
});

after(async () => {
  for (const s of sockets) s.destroy();
  server?.close();
  await h?.close();
});

async function seed(key: string, values: number[], endMs: number, stepMs: number): Promise<void> {
  const ops: BatchOp[] = values.map((v, i) => ({
    type: 'put',
    bucket: 'METRICS',
    key: [key, endMs - i * stepMs],
    value: v,
  }));
  await h.svc.platform.store.batch(ops);
}

async function statusOf(
  key: string,
): Promise<{ status: string; value: number | null; thresholds: { source: string; min?: number; cri?: number } }> {
  const r = await h.admin.request('GET', `/api/db/discovery/bucket/STATUS/key/${encodeURIComponent(key)}`);
  assert.equal(r.status, 200, r.text);
  return r.body.value;
}

test('computeThreshold: too little history → not computed, reported in skipped', async () => {
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { ports: String(port) } })).status, 200);
  assert.equal((await h.admin.request('GET', '/runDiscovery')).status, 200);
  const st = await statusOf(`port_${port}`);
  assert.equal(st.status, 'OK');
  assert.equal(st.thresholds.source, 'none', 'PORT has no fixed defaults and no baseline yet');
  const r = await h.admin.request('POST', '/computeThreshold');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.minSamples, 30);
  assert.equal(r.body.computed[`port_${port}`], undefined);
  assert.equal(r.body.skipped[`port_${port}`], 1);
  assert.match(r.body.message, /could not compute/);
  assert.equal((await h.admin.request('GET', `/api/db/discovery/bucket/THRESHOLDS/key/port_${port}`)).status, 404);
});

test('computeThreshold: enough history → a stored baseline that status uses while the fixed thresholds are unset', async () => {
  // 40 cycles of a port with no established connection: the baseline is a narrow band above 0.
  await seed(`port_${port}`, Array(40).fill(0), Date.now() - 60_000, 60_000);
  const r = await h.admin.request('POST', '/computeThreshold');
  assert.equal(r.status, 200, r.text);
  const b = r.body.computed[`port_${port}`];
  assert.ok(b && b.samples === 41 && b.median === 0 && b.cri > 0 && b.cri < 1, JSON.stringify(b));
  const stored = await h.admin.request('GET', `/api/db/discovery/bucket/THRESHOLDS/key/port_${port}`);
  assert.deepEqual(stored.body.value, b);

  // One established connection to the watched port is far above its baseline.
  const client = connect(port, '127.0.0.1');
  await once(client, 'connect');
  try {
    const cyc = await h.admin.request('GET', '/runDiscovery');
    assert.equal(cyc.body.statuses[`port_${port}`], 'CRITICAL', cyc.text);
    const st = await statusOf(`port_${port}`);
    assert.equal(st.value, 1);
    assert.equal(st.thresholds.source, 'auto');
    assert.equal(st.thresholds.cri, b.cri);
    // Fixed thresholds set for the group win over the baseline.
    assert.equal(
      (await h.admin.request('POST', '/updateSetting', { body: { discoPORTGFixedThreshCri: '5' } })).status,
      200,
    );
    await h.admin.request('GET', '/runDiscovery');
    const fixed = await statusOf(`port_${port}`);
    assert.equal(fixed.status, 'OK');
    assert.equal(fixed.thresholds.source, 'fixed');
  } finally {
    client.destroy();
  }
});

test('computeThreshold: CPU with its fixed thresholds cleared is evaluated against its baseline', async () => {
  const cleared = { discoCPUGFixedThreshMin: '', discoCPUGFixedThreshMaj: '', discoCPUGFixedThreshCri: '' };
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: cleared })).status, 200);
  await seed(
    'system_cpu',
    Array.from({ length: 50 }, (_, i) => 20 + (i % 5)),
    Date.now() - 60_000,
    60_000,
  );
  const r = await h.admin.request('POST', '/computeThreshold');
  assert.ok(r.body.computed.system_cpu, r.text);
  await h.admin.request('GET', '/runDiscovery');
  const st = await statusOf('system_cpu');
  assert.equal(st.thresholds.source, 'auto');
  assert.equal(st.thresholds.min, r.body.computed.system_cpu.min);
});

test('graphs: 400 for non-numeric or reversed ranges, unknown types', async () => {
  const bad = [
    'abc/100',
    '-1/100',
    '1.5/100',
    '1e5/200000',
    '100/abc',
    '200/100',
    '12345678901234567/12345678901234568',
    '%20/100',
  ];
  for (const b of bad) {
    assert.equal((await h.admin.request('GET', `/api/reportSysMetricsGraph/${b}`)).status, 400, `sys ${b}`);
    assert.equal((await h.admin.request('GET', `/process/reportGraph/process/node/${b}`)).status, 400, `proc ${b}`);
  }
  assert.equal((await h.admin.request('GET', '/process/reportGraph/nope/x/0/100')).status, 400);
  const empty = await h.admin.request('GET', '/api/reportSysMetricsGraph/100/100');
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body.series.system_cpu, []);
});

test('graphs: downsampled output is bounded (≤ 300 points per series, avg/min/max per bucket)', async () => {
  const t0 = 1_000_000_000;
  const n = 5000;
  const endMs = t0 + (n - 1) * 1000;
  await seed(
    'system_mem',
    Array.from({ length: n }, (_, i) => i % 100),
    endMs,
    1000,
  );
  await seed(
    'graphproc_cpu',
    Array.from({ length: n }, (_, i) => i % 7),
    endMs,
    1000,
  );
  const sys = await h.admin.request('GET', `/api/reportSysMetricsGraph/${t0}/${endMs}`);
  assert.equal(sys.status, 200, sys.text);
  const mem = sys.body.series.system_mem as Array<{ samples: number; min: number; max: number; avg: number }>;
  assert.ok(mem.length > 0 && mem.length <= 300, String(mem.length));
  assert.equal(
    mem.reduce((a, p) => a + p.samples, 0),
    n,
  );
  assert.ok(mem.every((p) => p.min <= p.avg && p.avg <= p.max));
  const proc = await h.admin.request('GET', `/process/reportGraph/process/graphproc/${t0}/${endMs}`);
  assert.equal(proc.status, 200, proc.text);
  assert.ok(proc.body.series.graphproc_cpu.length <= 300);
  assert.deepEqual(proc.body.series.graphproc_count, []);
  // A sub-range reads only its points.
  const part = await h.admin.request('GET', `/process/reportGraph/metric/system_mem/${t0}/${t0 + 9_000}`);
  assert.equal(part.body.series.system_mem.length, 10);
});
