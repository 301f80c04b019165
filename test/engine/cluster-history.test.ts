/**
 * History in a cluster through the HTTP API (docs/cluster.md "History"): a monitor run on instance A (the holder of
 * its shard: probe eu-1) is seen on instance B (probe us-1) within seconds — its status and last result in
 * GET /monitors, and the result (still in the open hour's WAL, not compacted) in B's POST /getMonitorDetails, each
 * naming where it ran (A's probe, location and INSTANCE name: history/origins.ts); a monitor deleted on A leaves B's
 * memory.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FAST_CLUSTER, sharedDataDir, startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('history across two instances on one PostgreSQL database', async () => {
  const made = await createTestDatabase('cluster_history');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  let a: MonitorHarness;
  let b: MonitorHarness;
  const env = (probe: string) => ({ STORE_URL: db.url, PROBE: probe, LOCATION: `${probe}-dc`, INSTANCE: `${probe}-a` });
  const ranOnA = { probe: 'eu-1', location: 'eu-1-dc', instance: 'eu-1-a' };
  const origin = (r: object | undefined) => {
    const o = r as { probe?: string; location?: string; instance?: string } | undefined;
    return { probe: o?.probe, location: o?.location, instance: o?.instance };
  };

  before(async () => {
    a = await startMonitor({ env: env('eu-1'), service: { cluster: FAST_CLUSTER } });
    // One CA and JWT key, as docs/cluster.md asks: B asks A for the rows of A's series over mTLS, signed with it.
    b = await startMonitor({ dataDir: sharedDataDir(a.dataDir), env: env('us-1'), service: { cluster: FAST_CLUSTER } });
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    await db.drop();
  });

  it('a result recorded on A: status, last result and recent results on B, with where it ran', async () => {
    const body = { name: 'eu-tcp', ip: '127.0.0.1', port: '9', sched: '1MIN', probe: 'eu-1', state: 'off' };
    assert.equal((await a.admin.request('POST', '/tcp/create', { body })).status, 201);
    let ran: { status: number; body: { ts: number; status: string } } | undefined;
    for (let i = 0; i < 100; i++) {
      ran = await a.admin.request('GET', '/monitor/run/eu-tcp/show');
      if (ran.status === 200) break;
      await sleep(100); // A takes the eu-1 shards at its next heartbeat
    }
    assert.equal(ran?.status, 200, JSON.stringify(ran?.body));
    const { ts, status } = ran.body;
    assert.notEqual(status, 'OK', 'port 9 refuses');
    assert.deepEqual(origin(ran.body), ranOnA, 'run now names where it ran');
    const t0 = Date.now();
    let last: { ts: number; status: string; message?: string } | undefined;
    while (Date.now() - t0 < 30_000) {
      const list = await b.admin.request('GET', '/monitors');
      last = (list.body as Array<{ name: string; last?: typeof last }>).find((m) => m.name === 'eu-tcp')?.last;
      if (last?.ts === ts) break;
      await sleep(50);
    }
    const seenAfterMs = Date.now() - t0;
    assert.equal(last?.ts, ts, "B lists A's result as the monitor's last result");
    assert.equal(last?.status, status);
    assert.ok(last?.message, 'with its message');
    assert.deepEqual(origin(last), ranOnA, "B's last result names A's probe and location");
    // A second run, read on B at once: A flushes every 2 s, so the row is in A's memory only (or, rarely, just
    // flushed): B's first read of A's series asks A for its rows (cluster/series-fetch.ts), not only the WAL.
    const again = await a.admin.request('GET', '/monitor/run/eu-tcp/show');
    assert.equal(again.status, 200, again.text);
    const details = await b.admin.request('POST', '/getMonitorDetails', {
      body: { type: 'tcp', name: 'eu-tcp', sched: '1MIN' },
    });
    assert.equal(details.status, 200, details.text);
    assert.equal(
      (details.body.recent as Array<{ ts: number }>)[0]?.ts,
      again.body.ts,
      "B's details hold A's newest result, which A had in memory",
    );
    assert.ok([ts, again.body.ts].includes(details.body.last?.ts));
    assert.deepEqual(origin(details.body.last), ranOnA);
    const recent = details.body.recent as Array<{ ts: number; status: string }>;
    const row = recent.find((r) => r.ts === ts && r.status === status);
    assert.ok(row, 'the open hour is read on B');
    assert.deepEqual(origin(row), ranOnA, "B's recent results name A's probe and location");
    console.log(`# B saw A's result ${seenAfterMs} ms after the run answered`);
  });

  it("a monitor deleted on A leaves B's memory (no stale rows for a new monitor of that name)", async () => {
    assert.ok(b.svc.history.series().some((s) => s.name === 'eu-tcp'));
    const del = await a.admin.request('DELETE', '/delete/exec/1MIN/eu-tcp');
    assert.equal(del.status, 200, del.text);
    const t0 = Date.now();
    while (b.svc.history.series().some((s) => s.name === 'eu-tcp') && Date.now() - t0 < 10_000) await sleep(20);
    assert.ok(!b.svc.history.series().some((s) => s.name === 'eu-tcp'));
    assert.equal(b.svc.history.latest('tcp', 'eu-tcp'), undefined);
  });
});
