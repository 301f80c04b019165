/**
 * docs/security.md §13 (review: /refresh_token neither rotated nor re-checked long-lived kinds; a 24 h token could be
 * refreshed forever) and issue 14's "15 years are 5,475 days". Through the HTTP API of both services: a refreshed
 * token replaces the old one (which stops after the 30 s grace), refreshing never passes the session cap counted
 * from the original login, a demoted admin cannot refresh a 1-year token, 60-day tokens are listed and revocable,
 * and 1-year / 15-year tokens end on the same calendar date 1 / 15 years later.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createPrivateKey, randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { startMonitor, ADMIN_PASSWORD, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, HARNESS_ADMIN_PW, type AgentHarness } from '../support/agent.harness.js';
import type { HttpsClient } from '../support/https-client.kit.js';
import { addYearsMs } from '../../src/core/auth/token-kinds.js';
import { DAY_MS } from '../../src/core/time.js';

let m: MonitorHarness;
let a: AgentHarness;

before(async () => {
  [m, a] = await Promise.all([startMonitor(), startAgent()]);
});
after(async () => {
  await m?.stop();
  await a?.close();
});

const login = async (c: HttpsClient, p: string, username = 'admin', password = ADMIN_PASSWORD) => {
  const r = await c.request('POST', p, { body: { username, password }, token: null });
  assert.equal(r.status, 200, `${p}: ${r.text}`);
  return r.body.token as string;
};
const refresh = (c: HttpsClient, token: string) => c.request('GET', '/refresh_token', { token });
const status = async (c: HttpsClient, token: string) => (await c.request('GET', '/api/me', { token })).status;

test('refresh rotates on both services: the old token stops after the 30 s grace, the new one works', async () => {
  const pairs: [HttpsClient, string][] = [
    [m.admin, await login(m.admin, '/login')],
    [m.admin, await login(m.admin, '/loginComponent1Year')],
    [a.admin, await login(a.admin, '/api/auth', 'admin', HARNESS_ADMIN_PW)],
  ];
  const fresh: string[] = [];
  for (const [c, old] of pairs) {
    const r = await refresh(c, old);
    assert.equal(r.status, 200, r.text);
    assert.equal(decodeJwt(r.body.token).authMs, decodeJwt(old).authMs, 'same session');
    assert.equal(await status(c, old), 200, 'in flight: the old token works during the grace');
    fresh.push(r.body.token);
  }
  await new Promise((r) => setTimeout(r, 31_000));
  for (const [i, [c, old]] of pairs.entries()) {
    assert.equal(await status(c, old), 401, `old token ${i} after the grace`);
    assert.equal((await refresh(c, old)).status, 401, `old token ${i} cannot be refreshed again`);
    assert.equal(await status(c, fresh[i]!), 200, `new token ${i}`);
  }
});

test('a refresh never passes the session cap counted from the original login (monitor 7 days, agent 12 h)', async () => {
  for (const [svc, c, kind, capMs] of [
    ['monitor', m.admin, 'login', 7 * DAY_MS],
    ['agent', a.admin, 'api', 12 * 3_600_000],
  ] as const) {
    const dataDir = svc === 'monitor' ? m.dataDir : a.dataDir;
    const key = createPrivateKey(fs.readFileSync(path.join(dataDir, `${svc}-jwt-key.pem`), 'utf8'));
    const { uid, tv } = decodeJwt(c.token!);
    const signed = (authMs: number) => {
      const nowS = Math.floor(Date.now() / 1000);
      return new SignJWT({ kind, iatMs: Date.now(), authMs, uid, tv })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
        .setSubject('admin')
        .setIssuer(`sentinel-${svc}`)
        .setAudience(svc)
        .setJti(randomUUID())
        .setIssuedAt(nowS)
        .setExpirationTime(nowS + 600)
        .sign(key);
    };
    const authMs = Date.now() - capMs + 120_000;
    const near = await refresh(c, await signed(authMs));
    assert.equal(near.status, 200, near.text);
    assert.ok(Date.parse(near.body.expire) <= authMs + capMs, `${svc}: capped at the session end: ${near.body.expire}`);
    const over = await refresh(c, await signed(Date.now() - capMs - 1000));
    assert.equal(over.status, 401, `${svc}: a session past its cap cannot be refreshed: ${over.text}`);
  }
});

test('a demoted admin cannot refresh its 1-year token', async () => {
  const r = await m.admin.request('POST', '/api/users', {
    body: { username: 'ex-admin', password: 'ex-admin-Pass-2024', group: 'admin' },
  });
  assert.equal(r.status, 201, r.text);
  const long = await login(m.admin, '/loginComponent1Year', 'ex-admin', 'ex-admin-Pass-2024');
  const demote = await m.admin.request('PATCH', '/api/users', { body: { username: 'ex-admin', group: 'user' } });
  assert.equal(demote.status, 200);
  const f = await refresh(m.admin, long);
  assert.ok(f.status === 401 || f.status === 403, `refresh after demotion: ${f.status}`);
});

test('monitor: 60-day tokens are listed and revocable like the long-lived ones', async () => {
  const t = await login(m.admin, '/loginComponent');
  const id = decodeJwt(t).jti!;
  const list = await m.admin.request('GET', '/api/tokens');
  assert.ok(
    list.body.some((x: { id: string; kind: string }) => x.id === id && x.kind === 'component'),
    'listed',
  );
  assert.equal((await m.admin.request('DELETE', `/api/tokens/${id}`)).status, 200);
  assert.equal(await status(m.admin, t), 401);
});

test('1-year and 15-year tokens end on the same calendar date 1 and 15 years later (both services)', async () => {
  for (const [c, pw] of [
    [m.admin, ADMIN_PASSWORD],
    [a.admin, HARNESS_ADMIN_PW],
  ] as const) {
    for (const [p, years] of [
      ['/loginComponent1Year', 1],
      ['/loginComponent15Years', 15],
    ] as const) {
      const token = await login(c, p, 'admin', pw);
      const claims = decodeJwt(token);
      const iatMs = claims.iatMs as number;
      assert.equal(claims.exp, Math.floor(addYearsMs(iatMs, years) / 1000), `${p}: calendar years`);
      const d0 = new Date(iatMs);
      const d1 = new Date(claims.exp * 1000);
      assert.equal(d1.getUTCFullYear() - d0.getUTCFullYear(), years);
      if (!(d0.getUTCMonth() === 1 && d0.getUTCDate() === 29)) assert.equal(d1.getUTCDate(), d0.getUTCDate());
    }
  }
});
