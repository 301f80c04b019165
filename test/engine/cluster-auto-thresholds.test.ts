/**
 * Automatic thresholds in a cluster (docs/reporting.md "Automatic thresholds", decision 179), through the HTTP API of
 * two instances on one fresh PostgreSQL database: a monitor with 30 results run on its holder, then autoThreshold
 * turned on. The member that does not hold it answers /getMonitorDetails with the holder's thresholds, read from the
 * store. Before, each member computed every monitor itself, and one that does not follow a monitor's open hours
 * (decision 173) found none of its rows: no thresholds there (`source: 'none'`), or thresholds from fewer rows than
 * the holder used.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startPair, type MonitorHarness } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';

const NAME = 'auto-thresh';

describe('automatic thresholds in a cluster', async () => {
  const made = await createTestDatabase('cluster_auto_thresh');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  let a: MonitorHarness;
  let b: MonitorHarness;
  const target = http.createServer((_req, res) => res.end('ok'));

  before(async () => {
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    [a, b] = await startPair({ STORE_URL: db.url });
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    target.closeAllConnections();
    target.close();
    await db.drop();
  });

  const details = (h: MonitorHarness) =>
    h.admin.request('POST', '/getMonitorDetails', { body: { type: 'url', name: NAME, sched: '1MIN' } });

  /** The member that holds the monitor, once one of them says so. */
  const holderOf = async (): Promise<MonitorHarness> => {
    for (let i = 0; i < 300; i++) {
      for (const h of [a, b]) if ((await details(h)).body.schedule?.assignment?.here === true) return h;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail('no member holds the monitor');
  };

  it('the member that does not run a monitor shows the thresholds its holder computed', async () => {
    const port = (target.address() as AddressInfo).port;
    const created = await a.admin.request('POST', '/url/create', {
      body: {
        name: NAME,
        display_name: NAME,
        probe: '*',
        url: `http://127.0.0.1:${port}/`,
        sched: '1MIN',
        state: 'off',
      },
    });
    assert.equal(created.status, 201, created.text);
    const holder = await holderOf();
    const other = holder === a ? b : a;
    for (let i = 0; i < 30; i++) {
      const run = await holder.admin.request('GET', `/monitor/run/${NAME}/show`);
      assert.equal(run.body.status, 'OK', run.text);
    }
    const on = await other.admin.request('POST', '/updateSetting', { body: { autoThreshold: 'true' } });
    assert.equal(on.status, 200, on.text);
    let held: Record<string, unknown> | undefined;
    let seen: Record<string, unknown> | undefined;
    for (let i = 0; ; i++) {
      held = (await details(holder)).body.thresholds;
      seen = (await details(other)).body.thresholds;
      if (held?.source === 'auto' && seen?.source === 'auto') break;
      assert.ok(
        i < 200,
        `thresholds on both within 10 s: holder ${JSON.stringify(held)}, other ${JSON.stringify(seen)}`,
      );
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(held.samples, 30, 'the holder computed them from its 30 results');
    assert.deepEqual(seen, held, 'the other member shows the holder’s thresholds');
  });
});
