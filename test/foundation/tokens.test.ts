/**
 * JWT handling on the real monitor service: every forged kind → 401 (with a control token signed by the real key that
 * passes), exact lifetimes of each login, admin-only long-lived tokens, refresh keeps the lifetime class, listing and
 * revoking long-lived tokens, and disabled / deleted users and password changes ending tokens at once.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createHmac, createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { after, before, test } from 'node:test';
import { SignJWT, decodeJwt } from 'jose';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { assertError, userClient } from '../support/api.kit.js';
import { addYearsMs } from '../../src/core/auth/token-kinds.js';

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;
let h: MonitorHarness;
let key: KeyObject;

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

function claims(over: Record<string, unknown> = {}) {
  const now = Math.floor(Date.now() / 1000);
  const { uid, tv } = decodeJwt(h.admin.token!);
  return {
    sub: 'admin',
    uid,
    tv,
    kind: 'login',
    iatMs: Date.now(),
    jti: randomUUID(),
    iss: 'sentinel-monitor',
    aud: 'monitor',
    iat: now,
    exp: now + 3600,
    ...over,
  };
}

function signReal(payload: Record<string, unknown>): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(key);
}

async function status(token: string): Promise<number> {
  return (await h.admin.request('GET', '/uptime', { token })).status;
}

before(async () => {
  h = await startMonitor();
  key = createPrivateKey(fs.readFileSync(path.join(h.dataDir, 'monitor-jwt-key.pem'), 'utf8'));
});
after(async () => h?.stop());

test('control: a token signed with the real key and the right claims is accepted', async () => {
  assert.equal(await status(await signReal(claims())), 200);
});

test('forged tokens → 401: alg none, HS256 keyed with the public key, tampered, expired, wrong issuer, agent token', async () => {
  const forged: Record<string, string> = {};
  forged.none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`;
  const pubPem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
  const hsInput = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims())}`;
  forged.hs256WithPublicKey = `${hsInput}.${createHmac('sha256', pubPem).update(hsInput).digest('base64url')}`;
  const [hd, , sig] = h.admin.token!.split('.');
  forged.tampered = `${hd}.${b64({ ...decodeJwt(h.admin.token!), sub: 'someone-else' })}.${sig}`;
  const [hd2, pl2] = h.admin.token!.split('.');
  forged.badSignature = `${hd2}.${pl2}.${Buffer.alloc(256, 7).toString('base64url')}`;
  const now = Math.floor(Date.now() / 1000);
  forged.expired = await signReal(claims({ iat: now - 7200, exp: now - 60 }));
  forged.wrongIssuer = await signReal(claims({ iss: 'sentinel-evil' }));
  forged.wrongAudience = await signReal(claims({ aud: 'somebody' }));
  forged.agentToken = await signReal(claims({ iss: 'sentinel-agent', aud: 'agent', kind: 'api' }));
  forged.unknownKind = await signReal(claims({ kind: 'forever' }));
  forged.noExp = await signReal(Object.fromEntries(Object.entries(claims()).filter(([k]) => k !== 'exp')));
  forged.unknownUser = await signReal(claims({ sub: 'ghost' }));
  forged.garbage = 'not.a.jwt';
  for (const [kind, token] of Object.entries(forged)) {
    const r = await h.admin.request('GET', '/uptime', { token });
    assert.equal(r.status, 401, `${kind}: ${r.status} ${r.text}`);
    assertError(r, 401);
  }
  assertError(await h.admin.request('GET', '/uptime', { token: null }), 401);
  assertError(
    await h.admin.request('GET', '/uptime', { token: null, headers: { authorization: 'Basic YWRtaW46eA==' } }),
    401,
  );
});

async function loginAt(p: string, username = 'admin', password = 'admin-pass-123') {
  const t0 = Date.now();
  const r = await h.admin.request('POST', p, { body: { username, password }, token: null });
  return { r, t0, t1: Date.now() };
}

test('lifetimes: /login 24 h, /loginComponent 60 d, 1Year and 15Years calendar years', async () => {
  const cases: [string, (iatMs: number) => number][] = [
    ['/login', (ms) => ms + DAY_S * 1000],
    ['/loginComponent', (ms) => ms + 60 * DAY_S * 1000],
    ['/loginComponent1Year', (ms) => addYearsMs(ms, 1)],
    ['/loginComponent15Years', (ms) => addYearsMs(ms, 15)],
  ];
  for (const [p, end] of cases) {
    const { r, t0, t1 } = await loginAt(p);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.code, 200);
    const expireMs = Date.parse(r.body.expire);
    const c = decodeJwt(r.body.token);
    const iatMs = c.iatMs as number;
    assert.ok(iatMs >= t0 && iatMs <= t1, `${p} iatMs`);
    assert.equal(c.exp! * 1000, Math.floor(end(iatMs) / 1000) * 1000, `${p} exp`);
    assert.equal(c.exp! * 1000, expireMs);
    assert.equal(await status(r.body.token), 200);
  }
});

test('only admins get 1-year and 15-year tokens; any user gets the 60-day one', async () => {
  await userClient(h, 'tok-user', 'user');
  assertError((await loginAt('/loginComponent1Year', 'tok-user', 'tok-user-pass-123')).r, 403);
  assertError((await loginAt('/loginComponent15Years', 'tok-user', 'tok-user-pass-123')).r, 403);
  assert.equal((await loginAt('/loginComponent', 'tok-user', 'tok-user-pass-123')).r.status, 200);
  assertError((await loginAt('/login', 'tok-user', 'wrong-password')).r, 401);
});

test('/refresh_token returns a new token of the same kind, never past the session cap', async () => {
  for (const [p, lifetimeS] of [
    ['/login', DAY_S],
    ['/loginComponent', 60 * DAY_S],
    ['/loginComponent1Year', 365 * DAY_S],
  ] as const) {
    const { r } = await loginAt(p);
    const before = decodeJwt(r.body.token);
    const f = await h.admin.request('GET', '/refresh_token', { token: r.body.token });
    assert.equal(f.status, 200, f.text);
    const c = decodeJwt(f.body.token);
    assert.equal(c.kind, before.kind);
    assert.ok(c.exp! - c.iat! <= lifetimeS + 1 && c.exp! - c.iat! >= lifetimeS - 1, `${p}: ${c.exp! - c.iat!}`);
    if (p !== '/login') assert.ok(c.exp! <= before.exp!, `${p}: a refresh only rotates`);
    assert.equal(c.authMs, before.authMs);
    assert.notEqual(c.jti, before.jti);
    assert.equal(await status(f.body.token), 200);
  }
  assertError(await h.admin.request('GET', '/refresh_token', { token: null }), 401);
  assertError(await h.admin.request('GET', '/refresh_token', { token: 'x.y.z' }), 401);
});

test('long-lived tokens are listed and revoking one ends it at once; 404 for an unknown id', async () => {
  const { r } = await loginAt('/loginComponent15Years');
  const jti = decodeJwt(r.body.token).jti!;
  const list = await h.admin.request('GET', '/api/tokens');
  assert.equal(list.status, 200);
  const rec = list.body.find((t: { id: string }) => t.id === jti);
  assert.ok(rec, 'the new token is listed');
  assert.equal(rec.kind, 'component15y');
  assert.equal(rec.revoked, false);
  assert.ok(!list.text.includes(r.body.token), 'the token itself is never listed');
  assert.ok(
    list.body.every((t: { kind: string }) => ['component', 'component1y', 'component15y'].includes(t.kind)),
    'only tracked kinds (60 days and longer)',
  );
  assert.equal(await status(r.body.token), 200);
  const del = await h.admin.request('DELETE', `/api/tokens/${jti}`);
  assert.equal(del.status, 200, del.text);
  assert.equal(del.body.revoked, true);
  assert.equal(await status(r.body.token), 401);
  assertError(await h.admin.request('GET', '/refresh_token', { token: r.body.token }), 401);
  assertError(await h.admin.request('DELETE', `/api/tokens/${randomUUID()}`), 404);
  const after2 = await h.admin.request('GET', '/api/tokens');
  assert.equal(after2.body.find((t: { id: string }) => t.id === jti).revoked, true);
});

test("a disabled or deleted user's tokens → 401 at once; a password change ends old tokens", async () => {
  const dis = await userClient(h, 'tok-disabled', 'user');
  assert.equal(await status(dis.token!), 200);
  assert.equal(
    (await h.admin.request('PATCH', '/api/users', { body: { username: 'tok-disabled', enabled: 'false' } })).status,
    200,
  );
  assert.equal(await status(dis.token!), 401);
  assertError((await loginAt('/login', 'tok-disabled', 'tok-disabled-pass-123')).r, 401);

  const del = await userClient(h, 'tok-deleted', 'readonly');
  const long = (await loginAt('/loginComponent', 'tok-deleted', 'tok-deleted-pass-123')).r.body.token;
  assert.equal(await status(del.token!), 200);
  assert.equal((await h.admin.request('DELETE', '/api/users/tok-deleted')).status, 200);
  assert.equal(await status(del.token!), 401);
  assert.equal(await status(long), 401);

  const pw = await userClient(h, 'tok-pw', 'readonly');
  assert.equal(await status(pw.token!), 200);
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(
    (await h.admin.request('PATCH', '/api/users', { body: { username: 'tok-pw', password: 'a-new-password-1' } }))
      .status,
    200,
  );
  assert.equal(await status(pw.token!), 401);
  const fresh = (await loginAt('/login', 'tok-pw', 'a-new-password-1')).r;
  assert.equal(fresh.status, 200);
  assert.equal(await status(fresh.body.token), 200);
  assertError((await loginAt('/login', 'tok-pw', 'tok-pw-pass-123')).r, 401);
});
