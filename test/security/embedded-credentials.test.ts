/**
 * docs/security.md §7 (review F8): credentials in URL userinfo and in sensitive header values are secrets. Through the
 * HTTP API: bob (user) stores the review's api monitor; readonly rita lists monitors and sees `***` where the password
 * and the header values were (before the fix: both in clear), the store holds none of them in plain text, the check
 * still sends them, `***` sent back in an update keeps them, and moving the monitor to another origin without
 * re-entering them is 400 (they stay with their target, §2).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import type { HttpsClient } from '../support/https-client.kit.js';

let h: MonitorHarness;
let bob: HttpsClient;
let rita: HttpsClient;
let target: http.Server;
let port: number;
const seen: http.IncomingHttpHeaders[] = [];
const SECRETS = ['S3cr3t-In-Url', 'AKIA-SUPERSECRET-KEY', 'prod-token-123', 'sess-cookie-99'];

before(async () => {
  h = await startMonitor();
  for (const [username, group] of [
    ['bob', 'user'],
    ['rita', 'readonly'],
  ]) {
    const r = await h.admin.request('POST', '/api/users', {
      body: { username, password: `${username}-pass-123456`, group, enabled: 'true' },
    });
    assert.equal(r.status, 201, r.text);
  }
  bob = h.client();
  await bob.login('bob', 'bob-pass-123456');
  rita = h.client();
  await rita.login('rita', 'rita-pass-123456');
  target = http.createServer((req, res) => {
    seen.push(req.headers);
    res.end('ok');
  });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  port = (target.address() as AddressInfo).port;
});
after(async () => {
  await h?.stop();
  await new Promise((r) => target?.close(r));
});

const headers =
  'X-Api-Key:AKIA-SUPERSECRET-KEY,Authorization:Bearer prod-token-123,Cookie:sid=sess-cookie-99,Accept:text/plain';

test('userinfo and sensitive header values are never shown, sealed at rest, and still sent', async () => {
  const c = await bob.request('POST', '/api/create', {
    body: {
      name: 'api-secret-hdr',
      sched: '60MIN',
      state: 'off',
      api: `http://svc-user:S3cr3t-In-Url@127.0.0.1:${port}/x`,
      headers,
      timeout: '3',
    },
  });
  assert.equal(c.status, 201, c.text);
  for (const client of [rita, bob, h.admin]) {
    const list = await client.request('GET', '/monitors');
    assert.equal(list.status, 200);
    for (const s of SECRETS) assert.ok(!list.text.includes(s), `${s} is not listed`);
    const m = list.body.find((x: { name: string }) => x.name === 'api-secret-hdr');
    assert.equal(m.api, `http://svc-user:***@127.0.0.1:${port}/x`);
    assert.equal(m.headers, 'X-Api-Key:***,Authorization:***,Cookie:***,Accept:text/plain');
  }
  const d = await rita.request('POST', '/getMonitorDetails', {
    body: { type: 'api', name: 'api-secret-hdr', sched: '60MIN' },
  });
  for (const s of SECRETS) assert.ok(!d.text.includes(s), `${s} not in details`);
  const run = await bob.request('GET', '/monitor/run/api-secret-hdr/show');
  assert.equal(run.body.status, 'OK', run.text);
  for (const s of SECRETS) assert.ok(!run.text.includes(s), `${s} not in the result`);
  const got = seen.at(-1)!;
  assert.equal(got['x-api-key'], 'AKIA-SUPERSECRET-KEY');
  assert.equal(got.authorization, `Basic ${Buffer.from('svc-user:S3cr3t-In-Url').toString('base64')}`);
  assert.equal(got.cookie, 'sid=sess-cookie-99');
  // At rest: the store file holds none of them in plain text.
  const files = fs.readdirSync(h.dataDir, { recursive: true }) as string[];
  const store = files.filter((f) => /\.mdb$/.test(f)).map((f) => fs.readFileSync(path.join(h.dataDir, f)));
  assert.ok(store.length > 0, 'found the store');
  for (const s of SECRETS) assert.ok(!store.some((b) => b.includes(s)), `${s} is sealed at rest`);
});

test('*** sent back keeps the stored credential; another origin needs them again', async () => {
  const keep = await bob.request('POST', '/api/update/60MIN/api-secret-hdr', {
    body: {
      api: `http://svc-user:***@127.0.0.1:${port}/y`,
      headers: 'X-Api-Key:***,Authorization:***,Cookie:***,Accept:text/html',
    },
  });
  assert.equal(keep.status, 200, keep.text);
  await bob.request('GET', '/monitor/run/api-secret-hdr/show');
  const got = seen.at(-1)!;
  assert.equal(got['x-api-key'], 'AKIA-SUPERSECRET-KEY');
  assert.equal(got.cookie, 'sid=sess-cookie-99');
  assert.equal(got.accept, 'text/html');
  const moved = await bob.request('POST', '/api/update/60MIN/api-secret-hdr', {
    body: { api: `http://svc-user:***@localhost:${port}/y` },
  });
  assert.equal(moved.status, 400, moved.text);
  assert.match(moved.body.message, /supply api, headers again/);
  const url = await bob.request('POST', '/url/create', {
    body: {
      name: 'url-userinfo',
      display_name: 'u',
      sched: '60MIN',
      state: 'off',
      probe: 'p1',
      url: `http://u:S3cr3t-In-Url@127.0.0.1:${port}/`,
    },
  });
  assert.equal(url.status, 201, url.text);
  assert.equal(url.body.monitor.url, `http://u:***@127.0.0.1:${port}/`);
  const urlMoved = await bob.request('POST', '/url/update/60MIN/url-userinfo', {
    body: { url: `http://u:***@127.0.0.2:${port}/` },
  });
  assert.equal(urlMoved.status, 400, urlMoved.text);
  assert.equal(urlMoved.body.field, 'body.url');
});
