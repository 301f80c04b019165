/**
 * Monitor definitions over the API: validation naming the field, names unique across types, secrets sealed and never
 * returned, update for every type, enable/disable/delete by sched + name, live schedule changes, restart.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';

let h: MonitorHarness;
before(async () => {
  h = await startMonitor();
});
after(async () => {
  await h?.stop();
});

const EXAMPLES: Record<string, Record<string, string>> = {
  url: { url: 'http://127.0.0.1:9/x', display_name: 'u', sched: '5MIN', state: 'off', probe: 'p' },
  api: {
    api: 'http://127.0.0.1:9/x',
    typeApi: 'POST',
    body: '{}',
    headers: 'X-A:1,X-B:2',
    basicAuthUser: 'u',
    basicAuthPwd: 'api-secret-pw',
  },
  tcp: { ip: '127.0.0.1', port: '9' },
  ping: { ip: '127.0.0.1' },
  nslookup: { domain: 'www.lab.test', recordType: 'A', dnsServer: '127.0.0.1:15353' },
  snmp: {
    ip: '127.0.0.1',
    port: '16161',
    version: 'v2c',
    community: 'snmp-secret-community',
    snmpOid: '1.3.6.1.2.1.1.5.0',
  },
  db: {
    dbType: 'postgres',
    dbIp: '127.0.0.1',
    dbPort: '5432',
    dbUser: 'u',
    dbPwd: 'db-secret-pw',
    dbDb: 'test',
    query: 'select 1',
  },
  sys: {},
};

test('every type can be created and updated; common defaults are filled', async () => {
  for (const [type, fields] of Object.entries(EXAMPLES)) {
    const name = `crud-${type}`;
    const c = await h.admin.request('POST', `/${type}/create`, { body: { name, state: 'off', ...fields } });
    assert.equal(c.status, 201, `${type}: ${c.text}`);
    assert.equal(c.body.monitor.type, type);
    const sched = c.body.monitor.sched;
    assert.equal(sched, '5MIN');
    const u = await h.admin.request('POST', `/${type}/update/${sched}/${name}`, {
      body: { location: 'rack-9', timeout: 5 },
    });
    assert.equal(u.status, 200, `${type}: ${u.text}`);
    assert.equal(u.body.monitor.location, 'rack-9');
    assert.equal(u.body.monitor.timeout, '5', 'a JSON number is read as its string');
  }
  const wrongType = await h.admin.request('POST', '/tcp/update/5MIN/crud-url', { body: { location: 'x' } });
  assert.equal(wrongType.status, 404);
});

test('secrets are sealed at rest, never returned, and kept when an update omits them', async () => {
  const list = await h.admin.request('GET', '/monitors');
  const text = list.text;
  for (const s of ['api-secret-pw', 'snmp-secret-community', 'db-secret-pw'])
    assert.ok(!text.includes(s), `${s} leaked in /monitors`);
  const api = list.body.find((m: { name: string }) => m.name === 'crud-api');
  assert.deepEqual(api.secretFieldsSet, ['basicAuthPwd']);
  const d = await h.admin.request('POST', '/getMonitorDetails', {
    body: { type: 'db', name: 'crud-db', sched: '5MIN' },
  });
  assert.equal(d.status, 200);
  assert.ok(!d.text.includes('db-secret-pw'));
  await h.svc.platform.store.bucket('monitors').get('crud-db');
  const dbFile = path.join(h.dataDir, 'monitor-db', 'data.mdb');
  const raw = fs.readFileSync(dbFile);
  for (const s of ['api-secret-pw', 'snmp-secret-community', 'db-secret-pw'])
    assert.equal(raw.indexOf(s), -1, `${s} is in the store in clear`);
  const plain = h.svc.platform.secrets;
  const stored = (await h.svc.platform.store.bucket('monitors').get<{ config: Record<string, string> }>('crud-db'))!;
  assert.equal(plain.decrypt(stored.config.dbPwd!), 'db-secret-pw', 'the update above kept the sealed password');
});

test('validation: 400 naming the field', async () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['url', { name: 'v1', sched: '5MIN', state: 'on', probe: 'p', url: 'http://x' }, 'body.display_name'],
    ['url', { name: 'v1', display_name: 'd', sched: '5MIN', state: 'on', probe: 'p', url: 'ftp://x' }, 'body.url'],
    ['url', { name: 'v1', display_name: 'd', sched: '7MIN', state: 'on', probe: 'p', url: 'http://x' }, 'body.sched'],
    [
      'url',
      {
        name: 'v1',
        display_name: 'd',
        sched: '5MIN',
        schedCron: '61 * * * *',
        state: 'on',
        probe: 'p',
        url: 'http://x',
      },
      'body.schedCron',
    ],
    [
      'url',
      { name: 'v1', display_name: 'd', sched: '5MIN', state: 'maybe', probe: 'p', url: 'http://x' },
      'body.state',
    ],
    [
      'url',
      { name: 'v1', display_name: 'd', sched: '5MIN', state: 'on', probe: 'p', url: 'http://x', pattern: '(unclosed' },
      'body.pattern',
    ],
    [
      'url',
      { name: 'v1', display_name: 'd', sched: '5MIN', state: 'on', probe: 'p', url: 'http://x', bogus: '1' },
      'body.bogus',
    ],
    ['api', { name: 'v2', api: 'http://x', typeApi: 'PATCH' }, 'body.typeApi'],
    ['api', { name: 'v2', api: 'http://x', typeApi: 'GET', patternComp: 'number >=' }, 'body.patternComp'],
    ['tcp', { name: 'v3', ip: '127.0.0.1' }, 'body.port'],
    ['nslookup', { name: 'v4', domain: 'a.b', recordType: 'SRV' }, 'body.recordType'],
    ['snmp', { name: 'v5', ip: '127.0.0.1', snmpOid: '1.3.6', version: 'v2c' }, 'body.community'],
    [
      'snmp',
      {
        name: 'v5',
        ip: '127.0.0.1',
        snmpOid: '1.3.6',
        version: 'v3',
        v3Username: 'u',
        v3SecurityLevel: 'authPriv',
        v3AuthProtocol: 'SHA',
        v3AuthPassword: 'xxxxxxxx',
      },
      'body.v3PrivProtocol',
    ],
    ['db', { name: 'v6', dbType: 'oracle', dbIp: 'h', dbUser: 'u', query: 'select 1' }, 'body.dbType'],
    ['db', { name: 'v6', dbType: 'mysql', dbIp: 'h', dbUser: 'u' }, 'body.query'],
    ['sys', { name: 'bad name!' }, 'body.name'],
    ['sys', { name: 'v7', threshMin: '50', threshCri: '10' }, 'body.threshMin'],
    ['sys', { name: 'v7', retries: '-1' }, 'body.retries'],
    ['sys', { name: 'v7', tags: 'a,b' }, 'body.tags'],
    ['sys', { name: 'v7', emailR: 'not-an-email' }, 'body.emailR'],
  ];
  for (const [type, body, field] of cases) {
    const r = await h.admin.request('POST', `/${type}/create`, { body });
    assert.equal(r.status, 400, `${type} ${JSON.stringify(body)} → ${r.status} ${r.text}`);
    assert.equal(r.body.field, field, `${type} ${JSON.stringify(body)}: ${r.text}`);
    assert.equal(r.body.error, 'VALIDATION');
  }
});

test('GET /monitors pages with offset/limit and counts the matches', async () => {
  const all = await h.admin.request('GET', '/monitors');
  const page = await h.admin.request('GET', '/monitors?offset=1&limit=2');
  assert.equal(page.status, 200);
  assert.equal(page.headers['x-total-count'], String(all.body.length));
  assert.deepEqual(
    page.body.map((m: { name: string }) => m.name),
    all.body.slice(1, 3).map((m: { name: string }) => m.name),
  );
  assert.equal((await h.admin.request('GET', '/monitors?limit=-1')).status, 400);
});

test('names are unique across types (409)', async () => {
  const r = await h.admin.request('POST', '/sys/create', { body: { name: 'crud-tcp' } });
  assert.equal(r.status, 409);
  assert.equal(r.body.error, 'CONFLICT');
});

test('enable, disable and delete act on any type by sched + name; 404 when sched does not match', async () => {
  assert.equal((await h.admin.request('POST', '/exec/enable/1MIN/crud-tcp')).status, 404);
  const en = await h.admin.request('POST', '/exec/enable/5MIN/crud-tcp');
  assert.equal(en.status, 200);
  assert.equal(en.body.monitor.state, 'on');
  const info = h.svc.engine.scheduleInfo('crud-tcp')!;
  assert.equal(info.enabled, true);
  assert.ok(info.nextDueMs! > Date.now());
  assert.ok(info.offsetMs >= 0 && info.offsetMs < info.spreadWindowMs);
  const d = await h.admin.request('POST', '/getMonitorDetails', {
    body: { type: 'tcp', name: 'crud-tcp', sched: '5MIN' },
  });
  assert.equal(d.body.schedule.offsetMs, info.offsetMs, 'the spread offset is visible in details');
  await h.admin.request('POST', '/exec/disable/5MIN/crud-tcp');
  assert.equal(h.svc.engine.scheduleInfo('crud-tcp')!.enabled, false);
  assert.equal(h.svc.engine.scheduleInfo('crud-tcp')!.nextDueMs, null, 'a disabled monitor has no next run');
  assert.equal((await h.admin.request('DELETE', '/delete/exec/1MIN/crud-tcp')).status, 404);
  assert.equal((await h.admin.request('DELETE', '/delete/exec/5MIN/crud-tcp')).status, 200);
  assert.equal(h.svc.engine.scheduleInfo('crud-tcp'), undefined);
  assert.equal((await h.admin.request('DELETE', '/delete/exec/5MIN/crud-tcp')).status, 404);
});

test('schedCron overrides the preset and concurrencyLimit applies live', async () => {
  const r = await h.admin.request('POST', '/sys/create', { body: { name: 'cron1', schedCron: '*/2 * * * *' } });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.monitor.sched, 'CRON');
  assert.equal(h.svc.engine.scheduleInfo('cron1')!.cron, '*/2 * * * *');
  await h.admin.request('POST', '/updateSetting', { body: { concurrencyLimit: '7' } });
  assert.equal(h.svc.engine.scheduler.stats().concurrencyLimit, 7);
});

test('readonly may list but not create or run; user may create and run', async () => {
  await h.admin.request('POST', '/api/users', {
    body: { username: 'ro', password: 'ro-password-1', group: 'readonly' },
  });
  await h.admin.request('POST', '/api/users', { body: { username: 'op', password: 'op-password-1', group: 'user' } });
  const ro = h.client();
  await ro.login('ro', 'ro-password-1');
  assert.equal((await ro.request('GET', '/monitors')).status, 200);
  assert.equal((await ro.request('POST', '/sys/create', { body: { name: 'ro1' } })).status, 403);
  assert.equal((await ro.request('GET', '/monitor/run/cron1/hide')).status, 403);
  const op = h.client();
  await op.login('op', 'op-password-1');
  assert.equal((await op.request('POST', '/sys/create', { body: { name: 'op1' } })).status, 201);
  assert.equal((await op.request('GET', '/monitor/run/op1/hide')).status, 200);
});

test('a restart keeps monitors, their state and schedule', async () => {
  await h.stop({ keepData: true });
  h = await startMonitor({ dataDir: h.dataDir });
  const list = await h.admin.request('GET', '/monitors');
  const names = list.body.map((m: { name: string }) => m.name);
  assert.ok(names.includes('crud-db') && names.includes('cron1') && names.includes('op1'));
  assert.ok(!names.includes('crud-tcp'));
  assert.equal(h.svc.engine.scheduleInfo('cron1')!.cron, '*/2 * * * *');
  assert.ok(h.svc.engine.scheduleInfo('op1')!.nextDueMs! > Date.now(), 'resumed: next run ahead within its interval');
  const op1 = list.body.find((m: { name: string }) => m.name === 'op1');
  assert.equal(op1.last.status, 'OK', 'the last result survives the restart');
});
