/**
 * Alerting in a cluster (docs/cluster.md "Alerting"): monitor services on one fresh PostgreSQL database share alert
 * state and the delivery queue. (1) An alert queued while its webhook answers 503, by an instance then killed with
 * kill -9 (a child process), is delivered by the surviving instance, exactly once. (2) Handover: a monitor DOWN and
 * alerted on A stays DOWN on B after A stops — no second DOWN alert; its recovery on B is alerted once.
 * Runs are made with run now on the lease holder (state off: nothing runs on its own); waits poll with generous bounds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  FAST_CLUSTER,
  sharedDataDir,
  startMonitor,
  ADMIN_PASSWORD,
  type MonitorHarness,
} from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import {
  makeTestTls,
  startWebhookReceiver,
  type TestTls,
  type WebhookReceiver,
} from '../support/webhook-receivers.fixture.js';
import { startMonitorChild, type MonitorChild } from '../support/monitor-child.harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined>, boundMs = 30_000): Promise<T> {
  const startMs = Date.now();
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() - startMs > boundMs) assert.fail(`not within ${boundMs} ms: ${what}`);
    await sleep(100);
  }
}

/** A loopback port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

const tcp = (name: string, port: number) => ({
  name,
  ip: '127.0.0.1',
  port: String(port),
  sched: '1MIN',
  state: 'off',
  notifyStatus: 'on',
  notifyAfter: '1',
  notifyChannels: 'webhook',
});

const details = (c: HttpsClient, name: string) =>
  c.request('POST', '/getMonitorDetails', { body: { type: 'tcp', name, sched: '1MIN' } });

/** The webhook requests about one monitor: [kind, status]. */
const alertsOf = (r: WebhookReceiver, name: string, sinceMs = 0) =>
  r.requests
    .filter((q) => q.atMs >= sinceMs && q.body?.monitor?.name === name)
    .map((q) => [q.body.kind as string, q.body.status as string]);

describe('alerting shared by monitor services on one PostgreSQL database', async () => {
  const made = await createTestDatabase('cluster_alerts');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  let tls: TestTls;
  let hook: WebhookReceiver;
  let a: MonitorHarness;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-alerts-'));
  const env = { STORE_URL: db.url, PROBE: 'eu-1' };

  before(async () => {
    tls = makeTestTls();
    fs.writeFileSync(path.join(tmp, 'receiver.pem'), tls.cert);
    hook = await startWebhookReceiver(tls);
    a = await startMonitor({ env, service: { cluster: FAST_CLUSTER, notify: { agent: tls.agent, timeoutMs: 5000 } } });
    const r = await a.admin.request('POST', '/alerting/channels/webhook', {
      body: { enabled: 'true', url: `${hook.url}/hook` },
    });
    assert.equal(r.status, 200, r.text);
  });

  after(async () => {
    await a?.stop();
    await hook?.close();
    tls?.agent.destroy();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** Creates monitors on A until one is held by the instance `client` talks to; resolves its name. */
  async function monitorHeldBy(prefix: string, port: number, client: HttpsClient): Promise<string> {
    for (let i = 0; i < 60; i++) {
      const name = `${prefix}-${i}`;
      const c = await a.admin.request('POST', '/tcp/create', { body: tcp(name, port) });
      assert.equal(c.status, 201, c.text);
      const here = await until(
        `${name} known there`,
        async () => (await details(client, name)).body.schedule?.assignment?.here,
      );
      if (here === true) return name;
    }
    return assert.fail('no monitor landed on the wanted instance');
  }

  /** Waits until `n` members split the '*' shards (none unheld, each holds some). */
  async function split(n: number): Promise<void> {
    await until(`the shards are split between ${n} members`, async () => {
      const body = (await a.admin.request('GET', '/cluster')).body as {
        members: Array<{ shards: Record<string, number[]> }>;
      };
      const counts = body.members.map((m) => m.shards['*']?.length ?? 0);
      const total = counts.reduce((x, y) => x + y, 0);
      return counts.length === n && counts.every((k) => k > 0) && total === 256 ? true : undefined;
    });
  }

  /**
   * A second instance as a child process (so it can be killed or stopped), holding a monitor of its own that went DOWN
   * while the webhook answers 503: its DOWN alert is queued there and its first delivery has failed.
   */
  async function childWithUndeliveredAlert(prefix: string): Promise<{ child: MonitorChild; name: string }> {
    const child = await startMonitorChild({
      ...env,
      DATA_DIR: sharedDataDir(a.dataDir),
      NODE_EXTRA_CA_CERTS: path.join(tmp, 'receiver.pem'),
      TEST_CLUSTER_HEARTBEAT_MS: String(FAST_CLUSTER.heartbeatMs),
      TEST_CLUSTER_TTL_MS: String(FAST_CLUSTER.ttlMs),
    });
    const onChild = new HttpsClient(child.url, certsFrom(path.join(a.dataDir, 'certs')));
    try {
      await split(2);
      await onChild.login('admin', ADMIN_PASSWORD);
      const name = await monitorHeldBy(prefix, await freePort(), onChild);
      hook.setDefault({ status: 503, body: 'down for maintenance' });
      const run = await onChild.request('GET', `/monitor/run/${name}/hide`);
      assert.equal(run.status, 200, run.text);
      assert.equal(run.body.status, 'DOWN');
      await until('the child tried to deliver (503)', async () => (alertsOf(hook, name).length > 0 ? true : undefined));
      return { child, name };
    } catch (err) {
      child.proc.kill('SIGKILL');
      throw err;
    } finally {
      onChild.close();
    }
  }

  it('an alert queued by an instance killed with kill -9 is delivered once by the other', async () => {
    let child: MonitorChild | undefined;
    try {
      let name: string;
      ({ child, name } = await childWithUndeliveredAlert('killed'));
      child.proc.kill('SIGKILL');
      await new Promise((r) => child!.proc.once('exit', r));
      const upMs = Date.now();
      hook.setDefault({ status: 200, body: 'ok' });
      await until('A delivered the alert the killed instance queued', async () => {
        const log = (await a.admin.request('GET', '/alerting/deliveries')).body as Array<Record<string, string>>;
        return log.some((d) => d.monitor === name && d.outcome === 'delivered') ? true : undefined;
      });
      await sleep(2 * FAST_CLUSTER.ttlMs); // sweeps keep running: nothing is sent again
      assert.deepEqual(alertsOf(hook, name, upMs), [['problem', 'DOWN']], 'delivered exactly once after the kill');
      const queued = (await a.admin.request('GET', '/alerting/deliveries')).body as Array<Record<string, string>>;
      assert.equal(queued.filter((d) => d.monitor === name).length, 1);
    } finally {
      if (child && child.proc.exitCode === null) child.proc.kill('SIGKILL');
      hook.setDefault({ status: 200, body: 'ok' });
    }
  });

  it('a paused instance (SIGSTOP past its claim, then SIGCONT) does not send the retry the other delivered', async () => {
    let child: MonitorChild | undefined;
    try {
      let name: string;
      ({ child, name } = await childWithUndeliveredAlert('paused'));
      child.proc.kill('SIGSTOP'); // its retry is due in ~5 s; its claims and leases lapse meanwhile
      const upMs = Date.now();
      hook.setDefault({ status: 200, body: 'ok' });
      await until('A delivered the alert of the paused instance', async () => {
        const log = (await a.admin.request('GET', '/alerting/deliveries')).body as Array<Record<string, string>>;
        return log.some((d) => d.monitor === name && d.outcome === 'delivered') ? true : undefined;
      });
      child.proc.kill('SIGCONT');
      await sleep(3 * FAST_CLUSTER.ttlMs); // the child's overdue retry timer fires: its claim lapsed, it sends nothing
      assert.deepEqual(alertsOf(hook, name, upMs), [['problem', 'DOWN']], 'sent once, by A');
    } finally {
      if (child && child.proc.exitCode === null) {
        child.proc.kill('SIGCONT');
        child.proc.kill('SIGKILL');
      }
      hook.setDefault({ status: 200, body: 'ok' });
    }
  });

  it('handover: still DOWN on the new holder sends no second DOWN alert; its recovery is sent once', async () => {
    const start = () =>
      startMonitor({
        dataDir: sharedDataDir(a.dataDir),
        env,
        service: { cluster: FAST_CLUSTER, notify: { agent: tls.agent, timeoutMs: 5000 } },
      });
    const b = await start();
    const c = await start();
    let bUp = true;
    try {
      await split(3);
      const port = await freePort();
      const name = await monitorHeldBy('handover', port, b.admin);
      const run = await b.admin.request('GET', `/monitor/run/${name}/hide`);
      assert.equal(run.body.status, 'DOWN', run.text);
      await until('the DOWN alert from B', async () => (alertsOf(hook, name).length === 1 ? true : undefined));
      // Acknowledged on C, which does not hold the monitor: the webhook is told, and B (the holder) follows.
      const ack = await c.admin.request('POST', `/alerting/ack/${name}`, { body: { note: 'on it' } });
      assert.equal(ack.status, 200, ack.text);
      await until('the acknowledge event', async () => (alertsOf(hook, name).length === 2 ? true : undefined));
      await until('B follows the acknowledgement', async () => {
        const p = (await b.admin.request('GET', `/alerting/problems?monitor=${name}`)).body as Array<{
          acknowledged?: { by: string; note?: string };
        }>;
        return p[0]?.acknowledged?.note === 'on it' ? true : undefined;
      });
      // B leaves: the shard goes to A or C, both started before the DOWN (the old code judged from what it loaded then).
      await b.stop();
      bUp = false;
      const holder = await until('the shard has a new holder', async () => {
        for (const h of [a, c]) if ((await details(h.admin, name)).body.schedule?.assignment?.here === true) return h;
        return undefined;
      });
      const again = await holder.admin.request('GET', `/monitor/run/${name}/hide`);
      assert.equal(again.body.status, 'DOWN', again.text);
      const listener = net.createServer((s) => s.end());
      await new Promise<void>((r) => listener.listen(port, '127.0.0.1', r));
      try {
        const ok = await holder.admin.request('GET', `/monitor/run/${name}/hide`);
        assert.equal(ok.body.status, 'OK', ok.text);
        await until('the recovery alert', async () => (alertsOf(hook, name).length >= 3 ? true : undefined));
      } finally {
        await new Promise((r) => listener.close(r));
      }
      await sleep(1000);
      // A second DOWN would have been queued before the recovery on the same lane (order kept per monitor).
      assert.deepEqual(alertsOf(hook, name), [
        ['problem', 'DOWN'],
        ['acknowledge', 'DOWN'],
        ['recovery', 'OK'],
      ]);
      const problems = (await a.admin.request('GET', '/alerting/problems')).body as Array<{ monitor: string }>;
      assert.ok(!problems.some((p) => p.monitor === name), 'no open problem left');
    } finally {
      await c.stop();
      if (bUp) await b.stop();
    }
  });
});
