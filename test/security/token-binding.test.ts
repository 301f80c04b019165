/**
 * docs/security.md §6 (review: revoked tokens came back). On both services, through the HTTP API: a token of a deleted
 * user does not work for a user re-created with the same name (not even with the new user's group), disable → enable,
 * a group change and a password change each end the tokens issued before, and the agent has the monitor's PATCH
 * /api/users. Upgrade (fixture v1, written before token binding): users get a uid by migration; their old tokens
 * (no uid claim) work until their expiry, and only until the first change of that user.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateKey } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, type AgentHarness } from '../support/agent.harness.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';

let m: MonitorHarness;
let a: AgentHarness;

before(async () => {
  [m, a] = await Promise.all([startMonitor(), startAgent()]);
});
after(async () => {
  await m?.stop();
  await a?.close();
});

interface Svc {
  name: string;
  admin: HttpsClient;
  loginPath: string;
  probePath: string;
  client(): HttpsClient;
}
const clients: HttpsClient[] = [];
const svcs = (): Svc[] => [
  { name: 'monitor', admin: m.admin, loginPath: '/login', probePath: '/uptime', client: () => m.client() },
  {
    name: 'agent',
    admin: a.admin,
    loginPath: '/api/auth',
    probePath: '/api/users',
    client: () => {
      const c = new HttpsClient(a.url, certsFrom(path.join(a.dataDir, 'certs')));
      clients.push(c);
      return c;
    },
  },
];
after(() => clients.forEach((c) => c.close()));

async function createUser(s: Svc, username: string, group: string, password = `${username}-Pass-2024`) {
  const r = await s.admin.request('POST', '/api/users', { body: { username, password, group } });
  assert.equal(r.status, 201, r.text);
  const c = s.client();
  return c.login(username, password, s.loginPath);
}
const patch = (s: Svc, body: Record<string, string>) => s.admin.request('PATCH', '/api/users', { body });
const readonlyRoute = (s: Svc) => (s.name === 'monitor' ? '/uptime' : '/v1/db/discovery/stats');

for (const svcName of ['monitor', 'agent']) {
  const svc = () => svcs().find((s) => s.name === svcName)!;

  test(`${svcName}: a deleted user's token does not come back when the name is created again`, async () => {
    const s = svc();
    const old = await createUser(s, 'eve', 'readonly');
    assert.equal((await s.admin.request('GET', readonlyRoute(s), { token: old })).status, 200);
    assert.equal((await s.admin.request('DELETE', '/api/users/eve')).status, 200);
    await createUser(s, 'eve', 'admin');
    const r = await s.admin.request('GET', '/api/users', { token: old });
    assert.equal(r.status, 401, `old token with the new admin's group: ${r.status}`);
    assert.equal((await s.admin.request('GET', readonlyRoute(s), { token: old })).status, 401);
    assert.equal((await s.admin.request('GET', '/refresh_token', { token: old })).status, 401);
  });

  test(`${svcName}: disable → enable, a group change and a password change end the earlier tokens`, async () => {
    const s = svc();
    const t1 = await createUser(s, 'mallory', 'user');
    assert.equal((await patch(s, { username: 'mallory', enabled: 'false' })).status, 200);
    assert.equal((await patch(s, { username: 'mallory', enabled: 'true' })).status, 200);
    assert.equal((await s.admin.request('GET', readonlyRoute(s), { token: t1 })).status, 401, 'disable → enable');

    const t2 = await s.client().login('mallory', 'mallory-Pass-2024', s.loginPath);
    assert.equal((await patch(s, { username: 'mallory', group: 'readonly' })).status, 200);
    assert.equal((await s.admin.request('GET', readonlyRoute(s), { token: t2 })).status, 401, 'group change');

    const t3 = await s.client().login('mallory', 'mallory-Pass-2024', s.loginPath);
    const pw = await patch(s, { username: 'mallory', password: 'another-Pass-2025' });
    assert.equal(pw.status, 200, `password change route: ${pw.text}`);
    assert.equal((await s.admin.request('GET', readonlyRoute(s), { token: t3 })).status, 401, 'password change');
    const login = await s.admin.request('POST', s.loginPath, {
      body: { username: 'mallory', password: 'mallory-Pass-2024' },
      token: null,
    });
    assert.equal(login.status, 401, 'the old password is refused');
    const t4 = await s.client().login('mallory', 'another-Pass-2025', s.loginPath);
    assert.equal((await s.admin.request('GET', readonlyRoute(s), { token: t4 })).status, 200);
    const c = decodeJwt(t4);
    assert.equal(typeof c.uid, 'string');
    assert.equal(c.tv, 5, 'four bumps after creation (disable, enable, group, password)');
  });
}

test('upgrade from fixture v1: users get a uid; their old tokens work until the first change', async () => {
  const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'upgrade', 'v1');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-binding-upgrade-'));
  fs.cpSync(path.join(fixture, 'data-dir'), dataDir, { recursive: true });
  const adminPw = JSON.parse(fs.readFileSync(path.join(fixture, 'expected.json'), 'utf8')).adminPassword as string;
  const key = createPrivateKey(fs.readFileSync(path.join(dataDir, 'monitor-jwt-key.pem'), 'utf8'));
  // A token as the version before token binding issued it: no uid, no tv.
  const oldToken = (issuedMs: number) =>
    new SignJWT({ kind: 'login', iatMs: issuedMs })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setSubject('fx-user')
      .setIssuer('sentinel-monitor')
      .setAudience('monitor')
      .setJti(`legacy-${issuedMs}`)
      .setIssuedAt(Math.floor(issuedMs / 1000))
      .setExpirationTime(Math.floor(issuedMs / 1000) + 3600)
      .sign(key);
  const before = await oldToken(Date.now() - 1000);
  const svc = await createMonitorService(
    readConfig('monitor', { DATA_DIR: dataDir, MONITOR_PORT: '0', HOST: '127.0.0.1', LOG_STDOUT: 'false' }),
  );
  const c = new HttpsClient(await svc.start(), certsFrom(path.join(dataDir, 'certs')));
  try {
    await c.login('admin', adminPw);
    const status = async (token: string) => (await c.request('GET', '/uptime', { token })).status;
    assert.equal(await status(before), 200, 'a token issued before the upgrade works until it expires');
    assert.equal(await status(await oldToken(Date.now() + 1000)), 401, 'a token without uid issued after: refused');
    const admin = decodeJwt(c.token!);
    assert.equal(typeof admin.uid, 'string', 'the migrated admin has a uid');
    for (const enabled of ['false', 'true']) {
      const r = await c.request('PATCH', '/api/users', { body: { username: 'fx-user', enabled } });
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(await status(before), 401, 'after the first change the old token is gone');
  } finally {
    c.close();
    await svc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
