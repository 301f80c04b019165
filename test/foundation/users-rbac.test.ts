/**
 * Users and groups on the real monitor service: CRUD with 400/404/409, passwords never returned, the last admin kept,
 * a 403 for each group below an endpoint, the permission matrix of every route (checked against docs/permissions.md;
 * `WRITE_PERMISSIONS_DOC=1` rewrites that file from what the server really answers), and login throttling per (user,
 * client) pair and per client address without revealing whether the user exists.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { certsFrom, postFrom, type HttpsClient } from '../support/https-client.kit.js';
import { assertError, userClient } from '../support/api.kit.js';
import { openApiDocument } from '../../src/core/http/docs.js';

let h: MonitorHarness;
let ro: HttpsClient;
let usr: HttpsClient;

before(async () => {
  h = await startMonitor();
  ro = await userClient(h, 'rb-readonly', 'readonly');
  usr = await userClient(h, 'rb-user', 'user');
});
after(async () => h?.stop());

function noSecrets(text: string): void {
  assert.ok(!/password|\$argon2/i.test(text), `no password field or hash in ${text.slice(0, 300)}`);
}

test('users: create, list, update, delete; passwords never in any response', async () => {
  const c = await h.admin.request('POST', '/api/users', {
    body: { username: 'alice', password: 'alice-pass-1', fullname: 'Alice', email: 'alice@example.com', group: 'user' },
  });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.username, 'alice');
  assert.equal(c.body.group, 'user');
  assert.equal(c.body.email, 'alice@example.com');
  assert.equal(c.body.enabled, 'true');
  noSecrets(c.text);
  const l = await h.admin.request('GET', '/api/users');
  assert.equal(l.status, 200);
  assert.ok(l.body.some((u: { username: string }) => u.username === 'alice'));
  noSecrets(l.text);
  const p = await h.admin.request('PATCH', '/api/users', {
    body: { username: 'alice', fullname: 'Alice B', group: 'readonly', email: '', password: 'alice-pass-2' },
  });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.body.fullname, 'Alice B');
  assert.equal(p.body.group, 'readonly');
  noSecrets(p.text);
  // Numbers and booleans are accepted as strings.
  const b = await h.admin.request('PATCH', '/api/users', { body: { username: 'alice', enabled: false } });
  assert.equal(b.status, 200, b.text);
  assert.equal(b.body.enabled, 'false');
  const d = await h.admin.request('DELETE', '/api/users/alice');
  assert.equal(d.status, 200, d.text);
  assert.ok(
    !(await h.admin.request('GET', '/api/users')).body.some((u: { username: string }) => u.username === 'alice'),
  );
});

test('users: 409 duplicate, 404 unknown, 400 bad group / short password / bad email / unknown field / missing fields', async () => {
  const base = { username: 'bob', password: 'bob-pass-123' };
  assert.equal((await h.admin.request('POST', '/api/users', { body: base })).status, 201);
  assertError(await h.admin.request('POST', '/api/users', { body: base }), 409);
  assertError(await h.admin.request('PATCH', '/api/users', { body: { username: 'nobody', fullname: 'x' } }), 404);
  assertError(await h.admin.request('DELETE', '/api/users/nobody'), 404);
  assertError(
    await h.admin.request('POST', '/api/users', { body: { username: 'c1', password: 'c1-pass-1234', group: 'root' } }),
    400,
    'group',
  );
  assertError(
    await h.admin.request('PATCH', '/api/users', { body: { username: 'bob', group: 'superuser' } }),
    400,
    'group',
  );
  assertError(
    await h.admin.request('POST', '/api/users', { body: { username: 'c2', password: 'short' } }),
    400,
    'password',
  );
  assertError(
    await h.admin.request('PATCH', '/api/users', { body: { username: 'bob', password: '1234567' } }),
    400,
    'password',
  );
  assertError(
    await h.admin.request('POST', '/api/users', {
      body: { username: 'c3', password: 'c3-pass-1234', email: 'not-an-email' },
    }),
    400,
    'email',
  );
  assertError(
    await h.admin.request('POST', '/api/users', { body: { username: 'c4', password: 'c4-pass-1234', shoeSize: '42' } }),
    400,
    'shoeSize',
  );
  assertError(await h.admin.request('POST', '/api/users', { body: { username: 'c5' } }), 400, 'password');
  assertError(await h.admin.request('POST', '/api/users', { body: { password: 'c6-pass-1234' } }), 400, 'username');
  assertError(
    await h.admin.request('POST', '/api/users', { body: { username: 'bad name/..', password: 'c7-pass-1234' } }),
    400,
    'username',
  );
  assertError(
    await h.admin.request('PATCH', '/api/users', { body: { username: 'bob', enabled: 'maybe' } }),
    400,
    'enabled',
  );
  const list = await h.admin.request('GET', '/api/users');
  assert.ok(
    !list.body.some((u: { username: string }) => /^c\d$/.test(u.username)),
    'nothing created by a rejected request',
  );
});

test('the last enabled admin cannot be deleted, demoted or disabled (409); with two admins it can', async () => {
  assertError(await h.admin.request('DELETE', '/api/users/admin'), 409);
  assertError(await h.admin.request('PATCH', '/api/users', { body: { username: 'admin', group: 'user' } }), 409);
  assertError(await h.admin.request('PATCH', '/api/users', { body: { username: 'admin', enabled: 'false' } }), 409);
  assert.equal(
    (
      await h.admin.request('POST', '/api/users', {
        body: { username: 'admin2', password: 'admin2-pass-1', group: 'admin' },
      })
    ).status,
    201,
  );
  assert.equal(
    (await h.admin.request('PATCH', '/api/users', { body: { username: 'admin2', group: 'readonly' } })).status,
    200,
  );
  assertError(await h.admin.request('DELETE', '/api/users/admin'), 409);
  assert.equal((await h.admin.request('DELETE', '/api/users/admin2')).status, 200);
});

test('a 403 for each group below an endpoint, with the one error body', async () => {
  const monitor = { name: 'rbac-probe', url: 'https://127.0.0.1:1/', sched: '60' };
  assertError(await ro.request('POST', '/url/create', { body: monitor }), 403);
  assertError(await ro.request('GET', '/reloadCertificates'), 403);
  assertError(await ro.request('POST', '/updateSetting', { body: { logLevel: 'info' } }), 403);
  assertError(await ro.request('GET', '/api/users'), 403);
  assertError(await usr.request('POST', '/updateSetting', { body: { logLevel: 'info' } }), 403);
  assertError(await usr.request('POST', '/setsmtpvault', { body: { smtpHost: 'mail.example.com' } }), 403);
  assertError(await usr.request('GET', '/api/users'), 403);
  assertError(await usr.request('POST', '/api/users', { body: { username: 'x1', password: 'x1-pass-1234' } }), 403);
  assertError(await usr.request('PATCH', '/api/users', { body: { username: 'rb-user', group: 'admin' } }), 403);
  assertError(await usr.request('DELETE', '/api/users/admin'), 403);
  assertError(await usr.request('GET', '/reloadCertificates'), 403);
  assertError(await usr.request('GET', '/api/tokens'), 403);
  assert.equal(
    (await h.admin.request('GET', '/api/users')).body.find((u: { username: string }) => u.username === 'rb-user').group,
    'user',
  );
});

test('readonly can GET /monitors, /setting and /uptime', async () => {
  for (const p of ['/monitors', '/setting', '/uptime', '/refresh_token']) {
    const r = await ro.request('GET', p);
    assert.equal(r.status, 200, `${p}: ${r.text}`);
  }
  noSecrets(JSON.stringify((await ro.request('GET', '/setting')).body).replace('smtpPassword', 'smtpP'));
});

type Level = 'none' | 'readonly' | 'user' | 'admin' | 'cluster';
interface Row {
  method: string;
  path: string;
  level: Level;
  statuses: number[];
}

/** What issue 2 says each of its endpoints needs. */
const EXPECTED: Record<string, Level> = {
  'POST /login': 'none',
  'POST /loginComponent': 'none',
  'POST /loginComponent1Year': 'none',
  'POST /loginComponent15Years': 'none',
  'GET /ping': 'none',
  'GET /getCert': 'none',
  'GET /api/metrics': 'none',
  'GET /refresh_token': 'readonly',
  'GET /setting': 'readonly',
  'GET /uptime': 'readonly',
  'GET /cluster': 'readonly',
  'GET /monitors': 'readonly',
  'POST /url/create': 'user',
  'GET /api/users': 'admin',
  'POST /api/users': 'admin',
  'PATCH /api/users': 'admin',
  'DELETE /api/users/{username}': 'admin',
  'POST /updateSetting': 'admin',
  'POST /setsmtpvault': 'admin',
  'GET /reloadCertificates': 'admin',
  'GET /api/tokens': 'admin',
  'DELETE /api/tokens/{id}': 'admin',
};

async function probeRoute(method: string, p: string): Promise<Row> {
  const url = p.replace(/\{[^}]+\}/g, 'rbac-x');
  const statuses: number[] = [];
  for (const c of [null, ro, usr, h.admin]) {
    const r = await h.admin.request(method, url, { token: c === null ? null : c.token! });
    statuses.push(r.status);
  }
  const [none, rdo, u, adm] = statuses as [number, number, number, number];
  const denied = (s: number) => s === 401 || s === 403;
  // cluster: another instance's signed request only (auth-guard.ts): every group's token is refused.
  const level: Level =
    none !== 401 ? 'none' : !denied(rdo) ? 'readonly' : !denied(u) ? 'user' : !denied(adm) ? 'admin' : 'cluster';
  // Consistency: no token → 401 unless open; each group below the level → 403; at or above → neither.
  const rank = { none: -1, readonly: 0, user: 1, admin: 2, cluster: 3 }[level];
  if (level !== 'none') assert.equal(none, 401, `${method} ${p} without a token`);
  [rdo, u, adm].forEach((s, i) => {
    if (i < rank) assert.equal(s, 403, `${method} ${p} as ${['readonly', 'user', 'admin'][i]}`);
    else
      assert.ok(
        !denied(s) || (level === 'none' && p.startsWith('/loginComponent1')),
        `${method} ${p} as ${['readonly', 'user', 'admin'][i]}: ${s}`,
      );
  });
  return { method, path: p, level, statuses };
}

function renderDoc(rows: Row[]): string {
  const mark = (r: Row, g: number) =>
    ({ none: -1, readonly: 0, user: 1, admin: 2, cluster: 3 })[r.level] <= g ? '✓' : '403';
  const needs = { none: 'none (client certificate only)', cluster: 'cluster members only (signed request)' };
  const lines = rows.map(
    (r) =>
      `| ${r.method} | \`${r.path}\` | ${needs[r.level as keyof typeof needs] ?? r.level} | ${mark(r, 0)} | ${mark(r, 1)} | ${mark(r, 2)} |`,
  );
  return `# Permission matrix of the monitor service

Generated from what the running service answers (test/foundation/users-rbac.test.ts probes every route in the OpenAPI
document with no token and with a readonly, a user and an admin token; rerun it with \`WRITE_PERMISSIONS_DOC=1\` after
adding routes). Every endpoint also needs a client certificate signed by the configured CA (mutual TLS). Without a token,
an endpoint that needs one answers 401; a group below the endpoint's level answers 403. Enforced in one place:
src/core/http/auth-guard.ts, from each route's \`config.auth\`. \`/docs/index.html\` (the API UI and its JSON) needs no token.
"Cluster members only" takes a request signed by another instance (src/core/auth/peer-proof.ts) and no user's token.

| method | path | needs | readonly | user | admin |
|---|---|---|---|---|---|
${lines.join('\n')}
`;
}

test('permission matrix: every route × group, as docs/permissions.md states', async () => {
  const doc = (await openApiDocument(h.svc.platform.app)) as { paths: Record<string, Record<string, unknown>> };
  const rows: Row[] = [];
  for (const [p, ops] of Object.entries(doc.paths)) {
    for (const m of Object.keys(ops)) {
      if (m === 'head') continue;
      rows.push(await probeRoute(m.toUpperCase(), p));
    }
  }
  rows.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  for (const [k, level] of Object.entries(EXPECTED)) {
    const row = rows.find((r) => `${r.method} ${r.path}` === k);
    assert.ok(row, `${k} exists`);
    assert.equal(row.level, level, `${k} needs ${level}`);
  }
  const docFile = path.resolve(import.meta.dirname, '../../docs/permissions.md');
  const text = renderDoc(rows);
  if (process.env.WRITE_PERMISSIONS_DOC === '1') fs.writeFileSync(docFile, text);
  assert.equal(
    fs.existsSync(docFile) ? fs.readFileSync(docFile, 'utf8') : '',
    text,
    'docs/permissions.md differs from the routes the service really has: rerun this test with WRITE_PERMISSIONS_DOC=1',
  );
});

function loginFrom(localAddress: string, username: string, password: string) {
  return postFrom(h.url, certsFrom(path.join(h.dataDir, 'certs')), '/login', localAddress, { username, password });
}

test('login throttling: 10 failures block the (user, client) pair, existing user or not, with the same answer', async () => {
  const victimPw = 'rb-user-pass-123';
  // 10 failures for one user from one address: that pair is blocked, the user from another address is not.
  const fails: string[] = [];
  for (let i = 0; i < 10; i++) fails.push((await loginFrom('127.0.0.10', 'rb-user', 'wrong-password')).body);
  const unknown: string[] = [];
  for (let i = 0; i < 10; i++) unknown.push((await loginFrom('127.0.0.30', 'ghost-user', 'wrong-password')).body);
  assert.deepEqual(
    new Set(fails),
    new Set(unknown),
    'a failed login reads the same for an existing and an unknown user',
  );
  const blocked = await loginFrom('127.0.0.10', 'rb-user', victimPw);
  const blockedUnknown = await loginFrom('127.0.0.30', 'ghost-user', 'whatever-1');
  for (const b of [blocked, blockedUnknown]) {
    assert.equal(b.status, 429, b.body);
    const s = Number(b.retryAfter);
    assert.ok(Number.isInteger(s) && s >= 1 && s <= 30, `Retry-After ${b.retryAfter}`);
    const body = JSON.parse(b.body);
    assert.equal(body.code, 429);
  }
  assert.equal(JSON.parse(blocked.body).message, JSON.parse(blockedUnknown.body).message, 'no user-existence leak');
  assert.equal((await loginFrom('127.0.0.20', 'rb-user', victimPw)).status, 200, 'the user from elsewhere');
  // 30 failures from one address with different names: the address is blocked, even for a correct password.
  for (let i = 0; i < 30; i++) await loginFrom('127.0.0.50', `nobody-${i}`, 'wrong-password');
  const byClient = await loginFrom('127.0.0.50', 'admin', 'admin-pass-123');
  assert.equal(byClient.status, 429);
  assert.ok(Number(byClient.retryAfter) <= 30);
  assert.equal((await loginFrom('127.0.0.51', 'admin', 'admin-pass-123')).status, 200);
});
