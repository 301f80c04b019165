/**
 * docs/security.md §20: registered discovery agents are URLs the monitor service calls with a stored credential. Through
 * the HTTP API: a `user` cannot register, change or delete one (else they could point the service, token attached, at
 * any URL: SSRF with credentials); readonly users list agents without the token or the CA; the token is write-only,
 * sealed at rest and bound to the URL (changing the URL without the token is a 400 naming body.token); bad input is a
 * 400 naming the field; a host belongs to one agent (409).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import type { HttpsClient } from '../support/https-client.kit.js';
import { assertError, userClient } from '../support/api.kit.js';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhZ2VudC10b2tlbi10ZXN0In0.c2lnbmF0dXJlLXNlY3JldC12YWx1ZQ';
let h: MonitorHarness;
let usr: HttpsClient;
let ro: HttpsClient;
let ca: string;

before(async () => {
  h = await startMonitor();
  usr = await userClient(h, 'ag-user', 'user');
  ro = await userClient(h, 'ag-readonly', 'readonly');
  ca = fs.readFileSync(path.join(h.dataDir, 'certs', 'ca.pem'), 'utf8');
});
after(async () => h?.stop());

test('a user cannot register, change or delete an agent; nothing is stored', async () => {
  const body = { url: 'https://attacker.example:8443', hosts: ['db-1'], token: TOKEN };
  assertError(await usr.request('POST', '/agents/evil', { body }), 403);
  assertError(await ro.request('POST', '/agents/evil', { body }), 403);
  assert.deepEqual((await h.admin.request('GET', '/agents')).body, []);
  const c = await h.admin.request('POST', '/agents/db1', {
    body: { url: 'https://127.0.0.1:8070', hosts: ['db-1', '127.0.0.1'], token: TOKEN, caCert: ca },
  });
  assert.equal(c.status, 201, c.text);
  // Retargeting the admin's agent (and its token) at the user's listener is refused for the user.
  assertError(await usr.request('POST', '/agents/db1', { body: { url: 'https://attacker.example:8443' } }), 403);
  assertError(await usr.request('DELETE', '/agents/db1'), 403);
  assert.equal((await h.admin.request('GET', '/agents/db1')).body.url, 'https://127.0.0.1:8070');
});

test('readonly and user list agents without the token or the CA; the token is sealed at rest', async () => {
  for (const c of [ro, usr, h.admin]) {
    const l = await c.request('GET', '/agents');
    assert.equal(l.status, 200, l.text);
    assert.equal(l.body[0].name, 'db1');
    assert.equal(l.body[0].tokenSet, true);
    assert.equal(l.body[0].caCertSet, true);
    assert.ok(!l.text.includes(TOKEN.slice(20, 40)) && !l.text.includes('BEGIN CERTIFICATE'), l.text);
    const one = await c.request('GET', '/agents/db1');
    assert.ok(!one.text.includes(TOKEN.slice(20, 40)) && !one.text.includes('BEGIN CERTIFICATE'), one.text);
  }
  const rec = await h.svc.platform.store.bucket('agents').get<Record<string, unknown>>('db1');
  assert.ok(!JSON.stringify(rec).includes(TOKEN.slice(20, 40)), 'token sealed at rest');
  assert.match(String(rec?.tokenSealed), /^enc:v1:/);
});

test('the token is bound to the URL: a new URL without the token is a 400, with it a 200', async () => {
  const moved = await h.admin.request('POST', '/agents/db1', { body: { url: 'https://10.9.9.9:8070' } });
  assertError(moved, 400, 'body.token');
  assert.equal((await h.admin.request('GET', '/agents/db1')).body.url, 'https://127.0.0.1:8070');
  const hostsOnly = await h.admin.request('POST', '/agents/db1', {
    body: { hosts: ['db-1', '127.0.0.1', 'DB-1.lan.'] },
  });
  assert.equal(hostsOnly.status, 200, hostsOnly.text);
  assert.deepEqual(hostsOnly.body.hosts, ['db-1', '127.0.0.1', 'db-1.lan']);
  const ok = await h.admin.request('POST', '/agents/db1', { body: { url: 'https://127.0.0.1:8070/', token: TOKEN } });
  assert.equal(ok.status, 200, ok.text);
});

test('bad input is a 400 naming the field; a host has one agent (409); unknown is 404', async () => {
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ url: 'http://127.0.0.1:8070', hosts: ['x'], token: TOKEN }, 'body.url'],
    [{ url: 'https://u:p@127.0.0.1:8070', hosts: ['x'], token: TOKEN }, 'body.url'],
    [{ url: 'https://127.0.0.1:8070/api?x=1', hosts: ['x'], token: TOKEN }, 'body.url'],
    [{ url: 'https://127.0.0.1:8070', hosts: [], token: TOKEN }, 'body.hosts'],
    [{ url: 'https://127.0.0.1:8070', hosts: ['a b'], token: TOKEN }, 'body.hosts'],
    [{ url: 'https://127.0.0.1:8070', hosts: ['x'] }, 'body.token'],
    [{ url: 'https://127.0.0.1:8070', hosts: ['x'], token: 'not a token\n' }, 'body.token'],
    [{ url: 'https://127.0.0.1:8070', hosts: ['x'], token: TOKEN, caCert: 'nope' }, 'body.caCert'],
    [{ url: 'https://127.0.0.1:8070', hosts: ['x'], token: TOKEN, extra: '1' }, 'extra'],
  ];
  for (const [body, field] of bad) assertError(await h.admin.request('POST', '/agents/a2', { body }), 400, field);
  assertError(await h.admin.request('POST', '/agents/bad%20name', { body: bad[0]![0] }), 400);
  const dup = await h.admin.request('POST', '/agents/a2', {
    body: { url: 'https://127.0.0.2:8070', hosts: ['db-1'], token: TOKEN },
  });
  assertError(dup, 409, 'db-1');
  assertError(await h.admin.request('GET', '/agents/nope'), 404);
  assertError(await h.admin.request('DELETE', '/agents/nope'), 404);
  const d = await h.admin.request('DELETE', '/agents/db1');
  assert.equal(d.status, 200, d.text);
  assert.deepEqual((await ro.request('GET', '/agents')).body, []);
});
