/**
 * docs/security.md §2 (review F2): a stored secret stays with the target it was entered for. Through the HTTP API as
 * a `user`: pointing an admin's api monitor at one's own listener, an admin's db monitor at another server (or keeping
 * the server and changing the query) and an admin's snmp monitor at another agent, without re-entering the secrets,
 * is a 400 naming the secret field (on the code before the fix: 200, and the next run sent the basic-auth password to
 * the listener). Re-entering the secret, or changing anything that is not the target, still works. Who created and
 * who last changed each monitor is recorded and shown; the per-user monitor limit (§10) answers 409 naming it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { userClient } from '../support/api.kit.js';
import type { HttpsClient } from '../support/https-client.kit.js';

let h: MonitorHarness;
let bob: HttpsClient;
let listener: http.Server;
let listenerUrl: string;
const seen: string[] = [];

before(async () => {
  h = await startMonitor();
  bob = await userClient(h, 'bob', 'user', 'Bob-pass-123');
  // bob's "attacker" listener: records every Authorization header it is sent.
  listener = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? '');
    res.end('ok');
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
});
after(async () => {
  await h?.stop();
  await new Promise((r) => listener?.close(r));
});

const off = { sched: '60MIN', state: 'off', timeout: '2' };

test('api: retargeting without the password is refused and nothing reaches the new target', async () => {
  const c = await h.admin.request('POST', '/api/create', {
    body: {
      ...off,
      name: 'billing-api',
      api: 'https://billing.internal.example:8443/health',
      basicAuthUser: 'svc-billing',
      basicAuthPwd: 'Adm1n-0nly-Billing-Pw',
    },
  });
  assert.equal(c.status, 201, c.text);
  const steal = await bob.request('POST', '/api/update/60MIN/billing-api', { body: { api: `${listenerUrl}/steal` } });
  assert.equal(steal.status, 400, steal.text);
  assert.equal(steal.body.field, 'body.basicAuthPwd');
  assert.match(steal.body.message, /changing api .*supply basicAuthPwd again/);
  const run = await bob.request('GET', '/monitor/run/billing-api/show');
  assert.equal(run.status, 200, run.text);
  assert.deepEqual(seen, [], 'the listener received nothing');
  // Same origin, another path: not a new target.
  const path = await bob.request('POST', '/api/update/60MIN/billing-api', {
    body: { api: 'https://billing.internal.example:8443/other' },
  });
  assert.equal(path.status, 200, path.text);
  // Scheme change (https → http on the same host) is another target too.
  const down = await bob.request('POST', '/api/update/60MIN/billing-api', {
    body: { api: 'http://billing.internal.example:8443/other' },
  });
  assert.equal(down.status, 400, down.text);
  // With the secret entered again the move is the author's own credential: allowed.
  const own = await bob.request('POST', '/api/update/60MIN/billing-api', {
    body: { api: `${listenerUrl}/mine`, basicAuthPwd: 'bobs-own-password' },
  });
  assert.equal(own.status, 200, own.text);
  await bob.request('GET', '/monitor/run/billing-api/show');
  assert.deepEqual(seen, [`Basic ${Buffer.from('svc-billing:bobs-own-password').toString('base64')}`]);
});

test('db: another server, database, login or query without the password is refused', async () => {
  const c = await h.admin.request('POST', '/db/create', {
    body: {
      ...off,
      name: 'orders-db',
      dbType: 'postgres',
      dbIp: 'db1.internal.example',
      dbUser: 'orders_ro',
      dbPwd: 'Adm1n-Set-DB-Pw!',
      dbDb: 'orders',
      query: 'select 1',
    },
  });
  assert.equal(c.status, 201, c.text);
  for (const body of [
    { dbIp: '127.0.0.1', dbPort: '28998' },
    { dbPort: '5433' },
    { dbDb: 'postgres' },
    { dbUser: 'postgres' },
    { query: 'select current_setting($$data_directory$$)' },
  ]) {
    const r = await bob.request('POST', '/db/update/60MIN/orders-db', { body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.body.field, 'body.dbPwd');
  }
  // The engine's default port written out is the same target.
  assert.equal((await bob.request('POST', '/db/update/60MIN/orders-db', { body: { dbPort: '5432' } })).status, 200);
  assert.equal((await bob.request('POST', '/db/update/60MIN/orders-db', { body: { threshCri: '900' } })).status, 200);
  const withPw = await bob.request('POST', '/db/update/60MIN/orders-db', {
    body: { query: 'select 2', dbPwd: 'bob-knows-it' },
  });
  assert.equal(withPw.status, 200, withPw.text);
});

test('snmp: another agent without the community is refused', async () => {
  const c = await h.admin.request('POST', '/snmp/create', {
    body: {
      ...off,
      name: 'core-switch',
      ip: '10.0.0.1',
      version: 'v2c',
      community: 'Adm1n-Community-RW',
      snmpOid: '1.3.6.1.2.1.1.3.0',
    },
  });
  assert.equal(c.status, 201, c.text);
  const r = await bob.request('POST', '/snmp/update/60MIN/core-switch', { body: { ip: '127.0.0.1', port: '28989' } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.field, 'body.community');
  const cleared = await bob.request('POST', '/snmp/update/60MIN/core-switch', {
    body: { ip: '127.0.0.1', community: 'public' },
  });
  assert.equal(cleared.status, 200, cleared.text);
});

test('createdBy and updatedBy are recorded and shown in details and the list', async () => {
  const d = await h.admin.request('POST', '/getMonitorDetails', {
    body: { type: 'snmp', name: 'core-switch', sched: '60MIN' },
  });
  assert.equal(d.status, 200, d.text);
  assert.equal(d.body.monitor.createdBy, 'admin');
  assert.equal(d.body.monitor.updatedBy, 'bob');
  await h.admin.request('POST', '/exec/disable/60MIN/core-switch');
  const list = await bob.request('GET', '/monitors');
  const m = list.body.find((x: { name: string }) => x.name === 'core-switch');
  assert.equal(m.createdBy, 'admin');
  assert.equal(m.updatedBy, 'admin', 'enable/disable counts as a change');
});

test('maxMonitorsPerUser: a user beyond the limit gets 409 naming it; admins are exempt', async () => {
  const s = await h.admin.request('POST', '/updateSetting', { body: { maxMonitorsPerUser: '2' } });
  assert.equal(s.status, 200, s.text);
  // bob has created none so far (he changed admin's monitors only).
  for (const name of ['bob-1', 'bob-2'])
    assert.equal(
      (await bob.request('POST', '/tcp/create', { body: { ...off, name, ip: '127.0.0.1', port: '9' } })).status,
      201,
    );
  const third = await bob.request('POST', '/tcp/create', {
    body: { ...off, name: 'bob-3', ip: '127.0.0.1', port: '9' },
  });
  assert.equal(third.status, 409, third.text);
  assert.equal(third.body.field, 'maxMonitorsPerUser');
  assert.match(third.body.message, /limit maxMonitorsPerUser is 2/);
  const adm = await h.admin.request('POST', '/tcp/create', {
    body: { ...off, name: 'adm-3', ip: '127.0.0.1', port: '9' },
  });
  assert.equal(adm.status, 201, 'admins are exempt');
  await bob.request('DELETE', '/delete/exec/60MIN/bob-1');
  assert.equal(
    (await bob.request('POST', '/tcp/create', { body: { ...off, name: 'bob-3', ip: '127.0.0.1', port: '9' } })).status,
    201,
  );
});
