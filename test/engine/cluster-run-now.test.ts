/**
 * Run now of a slow monitor asked of a member that does not hold it (docs/cluster.md "Run now"): the member waits for
 * the holder as long as the monitor's run may take (its timeout and grace, times its attempts, plus a margin), not
 * just the request timeout, so the check runs once — on the holder — and its result is readable on the member asked
 * when the answer arrives. Before, a check slower than REQUEST_TIMEOUT_MS (30 s; exec's default timeout is 60 s) made
 * the member take the holder for unreachable and run the check a second time itself. Two instances on one fresh
 * PostgreSQL database with REQUEST_TIMEOUT_MS 1 s; the target answers after 2.5 s and counts the requests.
 * And the attack: a client that sets the header members mark a forwarded run with (x-sentinel-forwarded-run) is not
 * taken for a member — the header counts only with a member's peer proof — so it cannot make an instance that does
 * not hold the monitor run it (before: it ran there, unfenced, beside the holder's history).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startPair, type MonitorHarness } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';

const SLOW_MS = 2500;

describe('run now of a check slower than the request timeout, asked of a member that does not hold it', async () => {
  const made = await createTestDatabase('cluster_run_now');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  let a: MonitorHarness;
  let b: MonitorHarness;
  let requests = 0;
  const target = http.createServer((_req, res) => {
    requests++;
    setTimeout(() => res.end('slow but fine'), SLOW_MS);
  });

  before(async () => {
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const env = { STORE_URL: db.url, PROBE: 'eu-1', REQUEST_TIMEOUT_MS: '1000' };
    // Settled: both hold a share of the 256 '*' shards, as both see it (so a holder found below stays put). The
    // monitors below have probe '*'; an eu-1 member holds eu-1 shards besides.
    [a, b] = await startPair(env);
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    target.closeAllConnections();
    target.close();
    await db.drop();
  });

  /** Creates a url monitor of the slow target (state off: it runs by hand only) and finds the member holding it. */
  const slowMonitor = async (name: string): Promise<{ holder: MonitorHarness; asked: MonitorHarness }> => {
    const port = (target.address() as AddressInfo).port;
    const created = await a.admin.request('POST', '/url/create', {
      body: {
        name,
        display_name: name,
        probe: '*',
        url: `http://127.0.0.1:${port}/slow`,
        timeout: '5',
        sched: '1MIN',
        state: 'off',
      },
    });
    assert.equal(created.status, 201, created.text);
    // The holder once both members name the same owner (the shards may still move while the two converge).
    for (let i = 0; ; i++) {
      assert.ok(i < 300, 'one member holds the monitor');
      const seen = await Promise.all([a, b].map(async (h) => (await details(h, name)).body.schedule?.assignment));
      const here = seen.map((x) => x?.here === true);
      if (here.filter(Boolean).length === 1 && seen[0]?.owner === seen[1]?.owner)
        return here[0] ? { holder: a, asked: b } : { holder: b, asked: a };
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const details = (h: MonitorHarness, name: string) =>
    h.admin.request('POST', '/getMonitorDetails', { body: { type: 'url', name, sched: '1MIN' } });
  const nameOf = (h: MonitorHarness) => (h === a ? 'a' : 'b');

  it('runs once, on the holder, and the member asked shows the result', async () => {
    const name = 'slow-run-now';
    const { holder, asked } = await slowMonitor(name);
    requests = 0;
    const run = await asked.admin.request('GET', `/monitor/run/${name}/show`);
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.status, 'OK', run.text);
    assert.equal(requests, 1, 'the check ran once (before: on the holder, then again on the member asked)');
    assert.equal(run.body.instance, nameOf(holder), 'it ran on the holder');
    assert.equal((await details(holder, name)).body.last?.ts, run.body.ts, 'the holder recorded the run');
    const onAsked = (await details(asked, name)).body;
    assert.equal(onAsked.last?.ts, run.body.ts, 'the member asked shows the run');
    assert.equal(onAsked.recent.length, 1, 'one result in the history');
  });

  it("attack: a client's forwarded-run header does not make a member that does not hold the monitor run it", async () => {
    const name = 'spoofed-forward';
    const { holder, asked } = await slowMonitor(name);
    requests = 0;
    const run = await asked.admin.request('GET', `/monitor/run/${name}/show`, {
      headers: { 'x-sentinel-forwarded-run': '1' },
    });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.instance, nameOf(holder), 'forwarded to the holder all the same (before: run where asked)');
    assert.equal(requests, 1);
    const forged = await asked.admin.request('GET', `/monitor/run/${name}/show`, {
      headers: {
        'x-sentinel-forwarded-run': '1',
        'x-sentinel-peer-proof': `v1.${Date.now() + 10_000}.${'A'.repeat(43)}`,
      },
    });
    assert.equal(forged.status, 200, forged.text);
    assert.equal(forged.body.instance, nameOf(holder), 'a forged proof counts for nothing');
  });
});
