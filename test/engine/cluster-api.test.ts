/**
 * GET /cluster and unassigned monitors through the HTTP API: single-process (LMDB) mode answers one member holding
 * everything; two monitor services (separate DATA_DIRs with the shared key files, one fresh PostgreSQL database, PROBE eu-1 and us-1) list
 * each other, split the '*' shards, keep each probe's shards on its own instance (run now of a us-1 monitor asked of
 * the eu-1 instance runs on the us-1 one), and report a monitor of a probe with no live instance as unassigned in
 * /cluster, GET /monitors and its details — also once the only us-1 instance has left.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FAST_CLUSTER, sharedDataDir, startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';
import { userClient } from '../support/api.kit.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface MemberOut {
  id: string;
  self: boolean;
  probe: string;
  location: string;
  shardCount: number;
  shards: Record<string, number[]>;
  lastHeartbeatMs: number;
  clockOffsetMs: number;
}

it('single-process mode: GET /cluster (readonly) lists this instance holding every shard', async () => {
  const h = await startMonitor({ env: { PROBE: 'eu-1', LOCATION: 'Frankfurt' } });
  try {
    const ro = await userClient(h, 'cl-ro', 'readonly');
    const r = await ro.request('GET', '/cluster');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.mode, 'single');
    assert.equal(r.body.members.length, 1);
    const [m] = r.body.members as [MemberOut];
    assert.equal(m.self, true);
    assert.equal(m.probe, 'eu-1');
    assert.equal(m.location, 'Frankfurt');
    assert.equal(m.shardCount, 256);
    assert.equal(m.clockOffsetMs, 0, 'single mode: no other clock to compare with');
    assert.equal((await h.admin.request('GET', '/cluster', { token: null })).status, 401);
  } finally {
    await h.stop();
  }
});

describe('two instances on one PostgreSQL database', async () => {
  const made = await createTestDatabase('cluster_api');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  let a: MonitorHarness;
  let b: MonitorHarness;
  const env = (probe: string) => ({ STORE_URL: db.url, PROBE: probe, LOCATION: `loc-${probe}`, INSTANCE: probe });

  before(async () => {
    a = await startMonitor({ env: env('eu-1'), service: { cluster: FAST_CLUSTER } });
    const tcp = (name: string, probe: string) =>
      a.admin.request('POST', '/tcp/create', { body: { name, ip: '127.0.0.1', port: '9', sched: '1MIN', probe } });
    for (const [name, probe] of <Array<[string, string]>>[
      ['anywhere', 'default'],
      ['star', '*'],
      ['eu', 'eu-1'],
      ['us', 'us-1'],
      ['asia', 'ap-1'],
    ])
      assert.equal((await tcp(name, probe)).status, 201);
    // The same CA and keys (docs/cluster.md): a run now forwarded to b is accepted there.
    b = await startMonitor({ dataDir: sharedDataDir(a.dataDir), env: env('us-1'), service: { cluster: FAST_CLUSTER } });
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    await db.drop();
  });

  it('members, shards per probe group and unassigned monitors', async () => {
    let body: { mode: string; members: MemberOut[]; unassigned: { monitors: number; probes: unknown[] } };
    const count = (m: MemberOut | undefined, g: string) => m?.shards[g]?.length ?? 0;
    for (let i = 0; ; i++) {
      body = (await a.admin.request('GET', '/cluster')).body;
      const [ma, mb] = [body.members.find((m) => m.probe === 'eu-1'), body.members.find((m) => m.probe === 'us-1')];
      const split = count(ma, '*') + count(mb, '*') === 256 && count(ma, '*') > 0 && count(mb, '*') > 0;
      if (split && count(ma, 'eu-1') === 256 && count(mb, 'us-1') === 256) break;
      if (i > 200) assert.fail(`no convergence: ${JSON.stringify(body)}`);
      await sleep(100);
    }
    assert.equal(body.mode, 'cluster');
    assert.equal(body.members.length, 2);
    const eu = body.members.find((m) => m.probe === 'eu-1')!;
    assert.equal(eu.self, true);
    assert.equal(eu.location, 'loc-eu-1');
    assert.equal(count(eu, 'us-1'), 0, 'an eu-1 instance holds no us-1 shard');
    assert.ok(eu.lastHeartbeatMs > 0);
    // Both instances run on this machine's clock, as PostgreSQL does: each member's offset is about 0.
    for (const m of body.members) assert.ok(Math.abs(m.clockOffsetMs) < 1000, `${m.id}: ${m.clockOffsetMs} ms`);
    assert.deepEqual(body.unassigned, { monitors: 1, probes: [{ probe: 'ap-1', monitors: 1, examples: ['asia'] }] });

    const list = (await a.admin.request('GET', '/monitors')).body as Array<{ name: string; unassigned?: boolean }>;
    assert.deepEqual(
      list.filter((m) => m.unassigned).map((m) => m.name),
      ['asia'],
    );
    const details = await a.admin.request('POST', '/getMonitorDetails', {
      body: { type: 'tcp', name: 'asia', sched: '1MIN' },
    });
    assert.equal(details.status, 200, details.text);
    assert.equal(details.body.schedule.assignment.unassigned, true);
    assert.equal(details.body.schedule.enabled, true);
    const us = await a.admin.request('POST', '/getMonitorDetails', {
      body: { type: 'tcp', name: 'us', sched: '1MIN' },
    });
    assert.equal(us.body.schedule.assignment.here, false, 'a us-1 monitor never runs on the eu-1 instance');
    assert.equal(us.body.schedule.nextDueMs, null);
    assert.equal(b.svc.engine.scheduleInfo('us')?.assignment?.here, true);
  });

  it('run now of a us-1 monitor asked of the eu-1 instance runs on the us-1 instance', async () => {
    const run = await a.admin.request('GET', '/monitor/run/us/show');
    assert.equal(run.status, 200, run.text);
    assert.deepEqual([run.body.probe, run.body.instance], ['us-1', 'us-1'], 'it ran on the us-1 instance');
    const details = (h: MonitorHarness) =>
      h.admin.request('POST', '/getMonitorDetails', { body: { type: 'tcp', name: 'us', sched: '1MIN' } });
    assert.equal((await details(b)).body.last?.ts, run.body.ts, 'the us-1 instance recorded the run');
    // The eu-1 instance shows the us-1 instance's result (decision 175), with where it ran.
    const onA = (await details(a)).body.last;
    assert.deepEqual(
      [onA?.ts, onA?.probe, onA?.instance],
      [run.body.ts, 'us-1', 'us-1'],
      'the eu-1 instance did not run it',
    );
  });

  it("a stopped instance leaves: the other takes its '*' shards", async () => {
    await b.stop();
    for (let i = 0; ; i++) {
      const body = (await a.admin.request('GET', '/cluster')).body as { members: MemberOut[] };
      if (body.members.length === 1 && body.members[0]!.shards['*']?.length === 256) break;
      if (i > 200) assert.fail(`no takeover: ${JSON.stringify(body)}`);
      await sleep(100);
    }
    const us = await a.admin.request('POST', '/getMonitorDetails', {
      body: { type: 'tcp', name: 'us', sched: '1MIN' },
    });
    assert.equal(us.body.schedule.assignment.unassigned, true);
    const cluster = (await a.admin.request('GET', '/cluster')).body;
    assert.deepEqual(
      cluster.unassigned.probes.map((p: { probe: string; monitors: number }) => [p.probe, p.monitors]).sort(),
      [
        ['ap-1', 1],
        ['us-1', 1],
      ],
    );
    const list = (await a.admin.request('GET', '/monitors')).body as Array<{ name: string; unassigned?: boolean }>;
    assert.deepEqual(
      list
        .filter((m) => m.unassigned)
        .map((m) => m.name)
        .sort(),
      ['asia', 'us'],
    );
    b = undefined as unknown as MonitorHarness;
  });
});
