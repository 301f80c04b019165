/**
 * The one error body on the real monitor service: malformed JSON 400, invalid field 400 naming it, unknown route 404,
 * oversized body 413, wrong content type 415, and never a 500 or a stack trace for bad input (a small fuzz).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import type { Res } from '../support/https-client.kit.js';
import { assertError } from '../support/api.kit.js';

let h: MonitorHarness;

before(async () => {
  h = await startMonitor();
});
after(async () => h?.stop());

test('malformed JSON → 400', async () => {
  for (const raw of ['{"logLevel":', '{logLevel: "debug"}', "{'a':1}", '{"a":1}}', 'nul']) {
    assertError(await h.admin.request('POST', '/updateSetting', { rawBody: raw }), 400);
  }
  assertError(await h.admin.request('POST', '/login', { rawBody: '{"username":"admin",', token: null }), 400);
  assertError(await h.admin.request('POST', '/updateSetting', { rawBody: '' }), 400);
});

test('an invalid field → 400 naming the field', async () => {
  const r = await h.admin.request('POST', '/api/users', {
    body: { username: 'e1', password: 'e1-pass-1234', group: 'wizard' },
  });
  assertError(r, 400, 'group');
  assert.equal(r.body.field, 'body.group');
  const u = await h.admin.request('POST', '/updateSetting', { body: { dataRetention: 'forever' } });
  assertError(u, 400, 'dataRetention');
  assertError(await h.admin.request('POST', '/login', { body: { username: 'admin' }, token: null }), 400, 'password');
});

test('unknown route or method → 404 JSON', async () => {
  for (const [m, p] of [
    ['GET', '/no/such/route'],
    ['DELETE', '/setting'],
    ['POST', '/ping'],
    ['GET', '/api/users/admin/extra'],
  ]) {
    const r = await h.admin.request(m!, p!);
    assertError(r, 404);
    assert.equal(r.body.error, 'NOT_FOUND');
    assert.match(String(r.headers['content-type']), /json/);
  }
  assertError(await h.admin.request('GET', '/no/such/route', { token: null }), 404);
});

test('a body over 1 MiB → 413', async () => {
  const big = JSON.stringify({ logLevel: 'x'.repeat(1024 * 1024 + 10) });
  const r = await h.admin.request('POST', '/updateSetting', { rawBody: big });
  assertError(r, 413);
  assertError(await h.admin.request('POST', '/login', { rawBody: big, token: null }), 413);
  assertError(await h.admin.request('POST', '/api/users', { rawBody: big }), 413);
});

test('a wrong content type → 415', async () => {
  for (const ct of [
    'application/xml',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'image/png',
  ]) {
    const r = await h.admin.request('POST', '/updateSetting', {
      rawBody: 'logLevel=debug',
      headers: { 'content-type': ct },
    });
    assertError(r, 415);
  }
});

// Fastify's built-in text/plain parser accepts the body, so validation answers 400 "body must be object" instead.
test('a text/plain body on a JSON endpoint → 415', async () => {
  assertError(
    await h.admin.request('POST', '/updateSetting', {
      rawBody: 'logLevel=debug',
      headers: { 'content-type': 'text/plain' },
    }),
    415,
  );
  assertError(
    await h.admin.request('POST', '/login', {
      rawBody: 'admin',
      headers: { 'content-type': 'text/plain' },
      token: null,
    }),
    415,
  );
});

// Fastify answers a bad URL (FST_ERR_BAD_URL) and an over-long path parameter (FST_ERR_MAX_PARAM_LENGTH, 414)
// through its frameworkErrors path, not the app's error handler.
test('a malformed URL or an over-long path parameter gets the one error body', async () => {
  const long = await h.admin.request('DELETE', `/api/users/${'x'.repeat(5000)}`);
  assertError(long, long.status);
  assertError(await h.admin.request('DELETE', '/api/users/%E0%A4%A'), 400);
  assertError(await h.admin.request('GET', '/%zz', { token: null }), 400);
});

function assertClientError(r: Res, what: string): void {
  assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${r.text.slice(0, 200)}`);
  assertError(r, r.status);
}

test('fuzz: odd bodies never cause a 500 and always get the error body', async () => {
  const huge = 'ä'.repeat(200_000);
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const deepObj = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
  const bodies: string[] = [
    '[]',
    'null',
    '"a string"',
    '123',
    'true',
    '[{"logLevel":"debug"}]',
    '{"logLevel":{"nested":{"deeper":[1,2,3]}}}',
    '{"logLevel":null}',
    '{"logLevel":["debug"]}',
    `{"logLevel":"${huge}"}`,
    deep,
    deepObj,
    '{"__proto__":{"isAdmin":true}}',
    '{"constructor":{"prototype":{"x":1}}}',
    '{"logLevel":"debug","logLevel":"bad"}',
    '{"logLevel":"\\u0000"}',
    '{"concurrencyLimit":1e309}',
    '{"concurrencyLimit":-0}',
    '{"concurrencyLimit":99999999999999999999}',
  ];
  const routes: [string, string][] = [
    ['POST', '/updateSetting'],
    ['POST', '/setsmtpvault'],
    ['POST', '/api/users'],
    ['PATCH', '/api/users'],
    ['POST', '/login'],
    ['POST', '/loginComponent'],
    ['POST', '/url/create'],
  ];
  for (const [m, p] of routes) {
    for (const b of bodies) {
      const r = await h.admin.request(m, p, { rawBody: b });
      assertClientError(r, `${m} ${p} ${b.slice(0, 40)}`);
    }
  }
  // Odd paths and headers.
  assertClientError(
    await h.admin.request('GET', '/setting', { token: null, headers: { authorization: 'Bearer ' } }),
    'empty bearer',
  );
  assertClientError(await h.admin.request('GET', '/setting', { token: `${'a'.repeat(8000)}.b.c` }), 'long token');
  assertClientError(
    await h.admin.request('POST', '/updateSetting', {
      rawBody: '{}',
      headers: { 'content-type': 'application/json; charset=latin1' },
    }),
    'charset',
  );
  // The service is still healthy.
  assert.equal((await h.admin.request('GET', '/setting')).status, 200);
  const s = (await h.admin.request('GET', '/setting')).body;
  assert.notEqual(s.logLevel, 'bad');
  assert.equal(({} as Record<string, unknown>).isAdmin, undefined);
});
