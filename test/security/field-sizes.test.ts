/**
 * Issue 13 item 10 (field sizes), through the HTTP API of both services: a 1 MB value in any string field is a 400
 * naming that field (every request string has a maxLength in the schema, docs/api.md), never stored; a body over the
 * 1 MiB limit is a 413; values up to a field's documented limit are accepted. On the old code the 1 MB values were
 * accepted (201/200) and stored.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startAgent, type AgentHarness } from '../support/agent.harness.js';
import { assertError } from '../support/api.kit.js';

let m: MonitorHarness;
let a: AgentHarness;
const MB = 'x'.repeat(1_000_000);

before(async () => {
  [m, a] = await Promise.all([startMonitor(), startAgent()]);
});
after(async () => {
  await Promise.all([m?.stop(), a?.close()]);
});

const tcp = { name: 'fs-tcp', ip: '127.0.0.1', port: '9', state: 'off' };

test('monitor: a 1 MB value in a create field, an update field, a user field or a setting is a 400 naming it', async () => {
  const cases: [string, string, Record<string, string>, string][] = [
    ['POST', '/tcp/create', { ...tcp, display_name: MB }, 'body.display_name'],
    ['POST', '/tcp/create', { ...tcp, tags: MB }, 'body.tags'],
    ['POST', '/api/create', { name: 'fs-api', api: 'https://127.0.0.1:1/', headers: MB }, 'body.headers'],
    ['POST', '/api/create', { name: 'fs-api', api: 'https://127.0.0.1:1/', body: MB }, 'body.body'],
    [
      'POST',
      '/nslookup/create',
      { name: 'fs-ns', domain: 'a.example', recordType: 'A', expectedValue: MB },
      'body.expectedValue',
    ],
    ['POST', '/db/create', { name: 'fs-db', dbType: 'postgres', query: `SELECT '${MB}'` }, 'body.query'],
    ['POST', '/api/users', { username: 'fs-user', password: 'fs-pass-12345', fullname: MB }, 'body.fullname'],
    ['POST', '/updateSetting', { vaultNamespace: MB }, 'body.vaultNamespace'],
    ['POST', '/secrets/fs-secret', { value: MB }, 'body.value'],
  ];
  for (const [method, path, body, field] of cases) {
    const r = await m.admin.request(method, path, { body });
    assertError(r, 400, field);
    assert.equal(r.body.field, field, `${path}: ${r.text}`);
  }
  const created = await m.admin.request('POST', '/tcp/create', { body: tcp });
  assert.equal(created.status, 201, created.text);
  const upd = await m.admin.request('POST', '/tcp/update/5MIN/fs-tcp', { body: { location: MB } });
  assertError(upd, 400, 'body.location');
  const list = await m.admin.request('GET', '/monitors');
  assert.ok(!list.text.includes('x'.repeat(3000)), 'no oversized value was stored');
  assert.equal(list.body.filter((x: { name: string }) => x.name.startsWith('fs-')).length, 1);
});

test('monitor: values at the documented limits are accepted (a 10,000-character db query, a 2,048-character display name)', async () => {
  const big = await m.admin.request('POST', '/db/create', {
    body: { name: 'fs-db-ok', dbType: 'postgres', state: 'off', query: `SELECT '${'q'.repeat(9_980)}'` },
  });
  assert.equal(big.status, 201, big.text.slice(0, 300));
  const dn = await m.admin.request('POST', '/tcp/create', {
    body: { ...tcp, name: 'fs-tcp-2', display_name: 'd'.repeat(2048) },
  });
  assert.equal(dn.status, 201, dn.text.slice(0, 300));
});

test('agent: a 1 MB value in a setting, an SMTP field or a user field is a 400 naming it', async () => {
  const cases: [string, Record<string, string>, string][] = [
    ['/updateSetting', { processes: MB }, 'body.processes'],
    ['/setsmtp', { smtpServerName: MB }, 'body.smtpServerName'],
    ['/api/users', { username: 'fs-user', password: 'fs-pass-12345', fullname: MB }, 'body.fullname'],
  ];
  for (const [path, body, field] of cases) {
    const r = await a.admin.request('POST', path, { body });
    assertError(r, 400, field);
    assert.equal(r.body.field, field, `${path}: ${r.text}`);
  }
  const s = await a.admin.request('GET', '/api/setting');
  assert.equal(s.body.processes, '');
});

test('both: a body over 1 MiB is a 413, before any field is looked at', async () => {
  const huge = { name: 'fs-huge', display_name: 'x'.repeat(1_100_000) };
  assertError(await m.admin.request('POST', '/tcp/create', { body: huge }), 413);
  assertError(await a.admin.request('POST', '/updateSetting', { body: { processes: 'x'.repeat(1_100_000) } }), 413);
});
