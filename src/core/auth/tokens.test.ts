import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { decodeJwt } from 'jose';
import { openLmdbStore, type LmdbStore } from '../storage/lmdb-store.js';
import { AppError } from '../errors.js';
import { DAY_MS, HOUR_MS, TokenService, YEAR_MS, type TokenClaims } from './tokens.js';

const KINDS = {
  login: { lifetimeMs: 24 * HOUR_MS, tracked: false, adminOnly: false },
  long: { lifetimeMs: YEAR_MS, tracked: true, adminOnly: true },
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
