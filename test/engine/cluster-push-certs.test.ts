/**
 * Push monitors and the certificate inventory in a cluster (docs/cluster.md "Push monitors", "Certificate
 * inventory"): two monitor services on one fresh PostgreSQL database. A ping sent to the instance that does not hold
 * the monitor is recorded by the holder (its history and last result; the other records nothing) and every instance
 * shows what was heard; a token created or rotated on one instance is accepted by the other at once. GET
 * /certificates on either instance lists the certificates every instance's checks saw. The attack: a pinger setting the
 * header members mark a forwarded ping with is not taken for a member (it counts only with a peer proof). Polled with
 * generous bounds.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestCerts } from '../support/http-targets.fixture.js';
import { startProtoServer } from '../support/starttls-servers.fixture.js';
import { startPair, type MonitorHarness } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';

const BOUND_MS = 10_000;

async function until(what: string, check: () => Promise<boolean>): Promise<number> {
  const startMs = Date.now();
  while (!(await check())) {
    if (Date.now() - startMs > BOUND_MS) assert.fail(`not within ${BOUND_MS} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const ms = Date.now() - startMs;
  console.log(`cluster: ${what}: ${ms} ms`);
  return ms;
}

describe('push pings and the certificate inventory across two instances on one PostgreSQL database', async () => {
  const made = await createTestDatabase('cluster_push');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  let a: MonitorHarness;
  let b: MonitorHarness;
  const details = (h: MonitorHarness, type: string, name: string) =>
    h.admin.request('POST', '/getMonitorDetails', { body: { type, name, sched: '5MIN' } });
  /** The instance holding the monitor's shard, once exactly one says so. */
  const holderOf = async (type: string, name: string): Promise<MonitorHarness> => {
    let holder: MonitorHarness | undefined;
    await until(`the shard of ${name} held by one instance`, async () => {
      const here = await Promise.all(
        [a, b].map(async (h) => (await details(h, type, name)).body.schedule?.assignment?.here === true),
      );
      holder = here[0] !== here[1] ? (here[0] ? a : b) : undefined;
      return holder !== undefined;
    });
    return holder!;
  };
  /** The INSTANCE name each result records (where it ran). */
  const recordedBy = (h: MonitorHarness) => (h === a ? 'a' : 'b');
  const ping = (h: MonitorHarness, token: string, signal = '', text?: string) =>
    h.admin.request(text === undefined ? 'GET' : 'POST', `/push/${token}${signal}`, {
      token: null,
      ...(text === undefined ? {} : { rawBody: text, headers: { 'content-type': 'text/plain' } }),
    });

  /** A push monitor made on A, once B accepts its token: the token, the instance holding it and the other one. */
  const pushJob = async (name: string) => {
    const c = await a.admin.request('POST', '/push/create', { body: { name, periodSeconds: '3600' } });
    assert.equal(c.status, 201, c.text);
    const token = c.body.generated.token as string;
    await until(
      `token of ${name} created on A accepted by B`,
      async () => (await ping(b, token, '/start')).status === 200,
    );
    const holder = await holderOf('push', name);
    return { token, holder, other: holder === a ? b : a };
  };

  before(async () => {
    // Settled: both hold a share of the 256 shards, as both see it (so the holders found below stay put).
    [a, b] = await startPair({ STORE_URL: db.url });
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    await db.drop();
  });

  it('a ping sent to the other instance is recorded by the holder; a token made on one is accepted by the other', async () => {
    const { token, holder, other } = await pushJob('job');
    const sent = await ping(other, token, '/fail', 'disk full');
    assert.equal(sent.status, 200, sent.text);
    await until('the fail ping sent to the other instance recorded by the holder', async () => {
      const last = (await details(holder, 'push', 'job')).body.last;
      return last?.status === 'DOWN' && /job reported failure .*: disk full$/.test(last.message);
    });
    // The instance pinged shows the holder's result once it has followed it (the holder's next flush), never its own.
    const onOther = (await details(other, 'push', 'job')).body;
    assert.ok(
      onOther.last === null || onOther.last.instance === recordedBy(holder),
      'the instance pinged recorded none',
    );
    await until('what the holder heard shown by the other instance', async () => {
      return (await details(other, 'push', 'job')).body.push?.lastKind === 'fail';
    });

    const rotated = await b.admin.request('POST', '/push/rotate/5MIN/job');
    assert.equal(rotated.status, 200, rotated.text);
    const fresh = rotated.body.generated.token as string;
    await until('token rotated on B accepted by A, the old one refused', async () => {
      return (await ping(a, fresh)).status === 200 && (await ping(a, token)).status === 404;
    });
    await until('the success ping recorded by the holder', async () => {
      return (await details(holder, 'push', 'job')).body.last?.status === 'OK';
    });
    const lastOnOther = (await details(other, 'push', 'job')).body.last;
    assert.ok(
      lastOnOther === null || lastOnOther.instance === recordedBy(holder),
      'still nothing recorded on the other',
    );
  });

  it("attack: a pinger's forwarded-run header does not make the instance that does not hold the monitor take the ping", async () => {
    const { token, holder, other } = await pushJob('spoof-job');
    // The header members mark a forwarded request with, without a member's peer proof (and then with a forged one).
    for (const proof of [undefined, `v1.${Date.now() + 10_000}.${'A'.repeat(43)}`]) {
      const headers: Record<string, string> = { 'x-sentinel-forwarded-run': '1' };
      if (proof) headers['x-sentinel-peer-proof'] = proof;
      const sent = await other.admin.request('GET', `/push/${token}/fail`, { token: null, headers });
      assert.equal(sent.status, 200, sent.text);
    }
    await until('the pings recorded by the holder', async () => {
      const last = (await details(holder, 'push', 'spoof-job')).body.last;
      return last?.status === 'DOWN';
    });
    const last = (await details(holder, 'push', 'spoof-job')).body.last;
    assert.equal(last.instance, recordedBy(holder), 'recorded where the monitor is held (before: where pinged)');
    const onOther = (await details(other, 'push', 'spoof-job')).body.last;
    assert.ok(onOther === null || onOther.instance === last.instance, 'the instance pinged recorded nothing itself');
  });

  it('GET /certificates on either instance lists what both instances saw', async () => {
    const soon = makeTestCerts(10);
    const server = await startProtoServer('tls', { cert: soon.serverCertPem, key: soon.serverKeyPem });
    try {
      const held = new Map<MonitorHarness, string[]>([
        [a, []],
        [b, []],
      ]);
      for (let i = 0; i < 20 && [...held.values()].some((l) => l.length === 0); i++) {
        const name = `tls-${i}`;
        const body = {
          name,
          ip: '127.0.0.1',
          port: String(server.port),
          tls: 'tls',
          ignoreTlsErrors: 'true',
          sched: '5MIN',
        };
        const made = await a.admin.request('POST', '/tcp/create', { body: { ...body, state: 'off' } });
        assert.equal(made.status, 201, made.text);
        const holder = await holderOf('tcp', name);
        const run = await holder.admin.request('GET', `/monitor/run/${name}/hide`);
        assert.equal(run.status, 200, run.text);
        held.get(holder)!.push(name);
      }
      const names = [...held.values()].flat().sort();
      assert.ok(held.get(a)!.length > 0 && held.get(b)!.length > 0, 'monitors held by both instances');
      for (const h of [a, b]) {
        await until(`${h === a ? 'A' : 'B'} lists the certificate with every monitor`, async () => {
          const list = (await h.admin.request('GET', '/certificates')).body as Array<{ monitors: { name: string }[] }>;
          return (
            list.length === 1 && JSON.stringify(list[0]!.monitors.map((m) => m.name).sort()) === JSON.stringify(names)
          );
        });
      }
      const gone = held.get(b)![0]!;
      assert.equal((await a.admin.request('DELETE', `/delete/exec/5MIN/${gone}`)).status, 200);
      await until('a deleted monitor leaves both inventories', async () => {
        const lists = await Promise.all([a, b].map(async (h) => (await h.admin.request('GET', '/certificates')).body));
        return lists.every((l) => !JSON.stringify(l).includes(`"${gone}"`));
      });
    } finally {
      await server.close();
    }
  });
});
