import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { decodeJwt } from 'jose';
import { openLmdbStore, type LmdbStore } from '../storage/lmdb-store.js';
import { AppError } from '../errors.js';
import { REFRESH_GRACE_MS, TokenService, type TokenClaims } from './tokens.js';
import { addYearsMs } from './token-kinds.js';
import { DAY_MS, HOUR_MS } from '../time.js';

const KINDS = {
  login: { lifetimeMs: 24 * HOUR_MS, tracked: false, adminOnly: false },
  long: { lifetimeYears: 1, tracked: true, adminOnly: true },
};
let dir: string;
let store: LmdbStore;
let t = 1_700_000_000_000;
const now = () => t;
const ANN = { username: 'ann', uid: 'uid-ann-1', tokenVersion: 1 };
const active = new Map<string, { uid: string; tv: number }>();
const isBound = (c: TokenClaims) => {
  const a = active.get(c.username);
  return !!a && c.uid === a.uid && (c.tv ?? -1) >= a.tv;
};
const make = (iss = 'sentinel-monitor', aud = 'monitor') =>
  new TokenService(store, path.join(dir, 'k.pem'), iss, aud, KINDS, isBound, now);

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokens-unit-'));
  store = await openLmdbStore({ path: path.join(dir, 'db') });
  active.set('ann', { uid: ANN.uid, tv: 1 });
});
after(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const is401 = (e: unknown) => e instanceof AppError && e.status === 401;

test('issue → verify round trip; the key file is 0600 and reused', async () => {
  const a = make();
  const tok = await a.issue(ANN, 'login');
  assert.equal(tok.expiresMs, t + DAY_MS);
  assert.equal(tok.expire, new Date(t + DAY_MS).toISOString());
  const c = await a.verify(tok.token);
  assert.equal(c.username, 'ann');
  assert.equal(c.kind, 'login');
  assert.equal(fs.statSync(path.join(dir, 'k.pem')).mode & 0o777, 0o600);
  assert.equal((await make().verify(tok.token)).jti, tok.id, 'a second instance (restart) reads the same key');
  assert.equal(decodeJwt(tok.token).jti, tok.id);
});

test('expiry is checked even for cached tokens', async () => {
  const a = make();
  const tok = await a.issue(ANN, 'login');
  await a.verify(tok.token);
  t += DAY_MS;
  await assert.rejects(a.verify(tok.token), is401);
  t -= DAY_MS;
});

test('issuer and audience are checked: a token of another service is refused', async () => {
  const agentTok = await make('sentinel-agent', 'agent').issue(ANN, 'login');
  await assert.rejects(make().verify(agentTok.token), is401);
});

const c0 = (c: TokenClaims) => `${c.uid}/${c.tv}`;

test('user state is checked on every verification (cached or not)', async () => {
  const a = make();
  const tok = await a.issue(ANN, 'login');
  await a.verify(tok.token);
  assert.equal(c0(await a.verify(tok.token)), 'uid-ann-1/1', 'the token carries uid and version');
  active.delete('ann');
  await assert.rejects(a.verify(tok.token), is401);
  active.set('ann', { uid: 'uid-ann-2', tv: 1 });
  await assert.rejects(a.verify(tok.token), is401, 'same name, another account');
  active.set('ann', { uid: ANN.uid, tv: 2 });
  await assert.rejects(a.verify(tok.token), is401, 'issued before the version bump');
  active.set('ann', { uid: ANN.uid, tv: 1 });
  await a.verify(tok.token);
});

test('tracked kinds are listed and revocable; revocation survives a reload; unknown id → 404', async () => {
  const a = make();
  const short = await a.issue(ANN, 'login');
  const long = await a.issue(ANN, 'long');
  const list = await a.list();
  assert.ok(list.some((x) => x.id === long.id));
  assert.ok(!list.some((x) => x.id === short.id), 'short-lived tokens are not recorded');
  await a.verify(long.token);
  const rec = await a.revoke(long.id);
  assert.equal(rec.revoked, true);
  await assert.rejects(a.verify(long.token), is401);
  const b = make();
  await b.load();
  await assert.rejects(b.verify(long.token), is401);
  await assert.rejects(a.revoke('nope'), (e: unknown) => e instanceof AppError && e.status === 404);
});

test('an unknown kind cannot be issued', async () => {
  await assert.rejects(make().issue(ANN, 'forever'), (e: unknown) => e instanceof AppError && e.status === 500);
});

test('refresh rotates: same session (authMs), the old token works for the grace and then not, also after a reload', async () => {
  const a = make();
  const first = await a.issue(ANN, 'login');
  const c1 = await a.verify(first.token);
  t += 60_000;
  const second = await a.refresh(c1, ANN);
  const c2 = await a.verify(second.token);
  assert.equal(c2.authMs, c1.authMs, 'the original authentication time is kept');
  assert.notEqual(c2.jti, c1.jti);
  await a.verify(first.token); // within the grace
  t += REFRESH_GRACE_MS;
  await assert.rejects(a.verify(first.token), is401);
  const b = make();
  await b.load();
  await assert.rejects(b.verify(first.token), is401, 'retirement survives a restart');
  await b.verify(second.token);
});

test('refresh never passes the session cap; a tracked token refreshed is marked replaced', async () => {
  const capped = new TokenService(
    store,
    path.join(dir, 'k.pem'),
    'sentinel-monitor',
    'monitor',
    { s: { lifetimeMs: 10 * HOUR_MS, maxSessionMs: 12 * HOUR_MS, tracked: true, adminOnly: false } },
    isBound,
    now,
  );
  const tok = await capped.issue(ANN, 's');
  t += 8 * HOUR_MS;
  const next = await capped.refresh(await capped.verify(tok.token), ANN);
  assert.equal(next.expiresMs, t - 8 * HOUR_MS + 12 * HOUR_MS, 'capped at authMs + 12 h, not now + 10 h');
  const old = (await capped.list()).find((x) => x.id === tok.id)!;
  assert.equal(old.revoked, true);
  assert.equal(old.replacedBy, next.id);
  t += 4 * HOUR_MS;
  await assert.rejects(capped.issue(ANN, 's', t - 12 * HOUR_MS), is401, 'the session is over');
  t -= 12 * HOUR_MS;
});

test('calendar years: 15 years is the same date 15 years later (not 15 × 365 days); Feb 29 → Feb 28', () => {
  const from = Date.UTC(2026, 10, 26, 10, 0, 0);
  assert.equal(addYearsMs(from, 15), Date.UTC(2041, 10, 26, 10, 0, 0));
  assert.notEqual(addYearsMs(from, 15), from + 15 * 365 * DAY_MS);
  assert.equal(addYearsMs(Date.UTC(2028, 1, 29, 12), 1), Date.UTC(2029, 1, 28, 12));
  assert.equal(addYearsMs(Date.UTC(2028, 1, 29, 12), 4), Date.UTC(2032, 1, 29, 12));
});
