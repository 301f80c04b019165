/**
 * What a monitor gets when a field is left out, through the HTTP API: one set of defaults for every type (stored and
 * shown, and listed as `default` in the OpenAPI), db with only the spec's two required fields, typeApi GET in any case,
 * `{sched}` paths that accept the monitor's real schedule (CRON for schedCron), run-now of a disabled monitor saying
 * so, emailOnF implying notifyStatus (with warnings when an alert cannot go out), the timezone setting for schedCron.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { requirePeer } from '../support/peers.fixture.js';

let h: MonitorHarness;
before(async () => {
  h = await startMonitor();
});
after(async () => {
  await h?.stop();
});

const create = (type: string, body: Record<string, unknown>) => h.admin.request('POST', `/${type}/create`, { body });

test('every type gets the same defaults, stored with the monitor; exec alone has a 60 s timeout', async () => {
  const tcp = await create('tcp', { name: 'def-tcp', ip: '127.0.0.1', port: '9' });
  assert.equal(tcp.status, 201, tcp.text);
  const sys = await create('sys', { name: 'def-sys', state: 'off' });
  assert.equal(sys.status, 201, sys.text);
  const expected = {
    display_name: 'def-tcp',
    sched: '5MIN',
    state: 'on',
    probe: 'default',
    timeout: '10',
    retries: '0',
    notifyStatus: 'off',
    notifyAfter: '1',
  };
  for (const [k, v] of Object.entries(expected)) assert.equal(tcp.body.monitor[k], v, `tcp ${k}`);
  for (const k of ['sched', 'probe', 'timeout', 'retries', 'notifyStatus', 'notifyAfter'])
    assert.equal(sys.body.monitor[k], expected[k as keyof typeof expected], `sys ${k}`);
  const exec = await create('exec', {
    name: 'def-exec',
    state: 'off',
    steps: [{ action: 'goto', url: 'http://127.0.0.1:9/' }],
  });
  assert.equal(exec.status, 201, exec.text);
  assert.equal(exec.body.monitor.timeout, '60');
  // The OpenAPI lists them as `default` on every create body.
  const doc = (await h.admin.request('GET', '/docs/index.html/json')).body;
  const props = (p: string) => doc.paths[p].post.requestBody.content['application/json'].schema.properties;
  for (const type of ['url', 'api', 'tcp', 'ping', 'nslookup', 'snmp', 'db', 'sys']) {
    const p = props(`/${type}/create`);
    for (const k of ['sched', 'state', 'probe', 'timeout', 'retries', 'notifyStatus', 'notifyAfter', 'emailOnF'])
      assert.ok(p[k].default !== undefined, `${type}.${k} has a default in the OpenAPI`);
    assert.equal(p.timeout.default, '10');
  }
  assert.equal(props('/exec/create').timeout.default, '60');
  assert.equal(props('/api/create').typeApi.default, 'GET');
  assert.equal(props('/db/create').dbIp.default, '127.0.0.1');
});

test('a partial update keeps every stored field (schema defaults are never written into the body)', async () => {
  const c = await create('tcp', { name: 'def-keep', ip: '127.0.0.1', port: '9', timeout: '30', state: 'off' });
  assert.equal(c.status, 201, c.text);
  const u = await h.admin.request('POST', '/tcp/update/5MIN/def-keep', { body: { location: 'lab' } });
  assert.equal(u.status, 200, u.text);
  assert.equal(u.body.monitor.timeout, '30');
  assert.equal(u.body.monitor.state, 'off');
  assert.equal(u.body.monitor.location, 'lab');
});

test('db: only dbType and query are required; dbIp 127.0.0.1, the engine port and the OS user are used', async (t) => {
  const skip = await requirePeer('postgres');
  if (skip) return t.skip(skip);
  const c = await create('db', { name: 'def-db', state: 'off', dbType: 'postgres', query: 'select 1' });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.monitor.dbIp, '127.0.0.1');
  assert.equal(c.body.monitor.dbUser, undefined);
  const r = await h.admin.request('GET', '/monitor/run/def-db/show');
  assert.equal(r.status, 200, r.text);
  // It connected to 127.0.0.1:5432 as the OS user. Where that role may log in (a least-privilege account) the run is
  // OK; the CI peers' root role is a superuser, which the privileged-login guard refuses (EXCEPTION), so either
  // answer came from the server. A validation error, or DOWN (nothing there), fails the test.
  assert.deepEqual(
    { host: r.body.details.host, port: r.body.details.port, user: r.body.details.user },
    { host: '127.0.0.1', port: 5432, user: os.userInfo().username },
  );
  assert.ok(['OK', 'ERROR', 'EXCEPTION'].includes(r.body.status), `${r.body.status} ${r.body.message}`);
  if (r.body.status === 'EXCEPTION') assert.match(r.body.message, /privileged/);
});

test('api: typeApi defaults to GET and is accepted in any case', async () => {
  const a = await create('api', { name: 'def-api', state: 'off', api: 'http://127.0.0.1:9/' });
  assert.equal(a.status, 201, a.text);
  assert.equal(a.body.monitor.typeApi, 'GET');
  const b = await create('api', { name: 'def-api-post', state: 'off', api: 'http://127.0.0.1:9/', typeApi: 'post' });
  assert.equal(b.status, 201, b.text);
  assert.equal(b.body.monitor.typeApi, 'POST');
  const bad = await create('api', { name: 'def-api-bad', api: 'http://127.0.0.1:9/', typeApi: 'patch' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, 'body.typeApi');
});

test('{sched} paths: the real sched in any case; CRON finds every monitor that has a schedCron', async () => {
  const c = await create('tcp', { name: 'def-cron', state: 'off', ip: '127.0.0.1', port: '9', schedCron: '0 9 * * *' });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.monitor.sched, 'CRON');
  const both = await create('tcp', {
    name: 'def-both',
    state: 'off',
    ip: '127.0.0.1',
    port: '9',
    sched: '10MIN',
    schedCron: '0 9 * * *',
  });
  assert.equal(both.status, 201, both.text);
  for (const [sched, name] of [
    ['CRON', 'def-cron'],
    ['cron', 'def-cron'],
    ['10MIN', 'def-both'],
    ['10min', 'def-both'],
    ['CRON', 'def-both'],
  ]) {
    const d = await h.admin.request('POST', '/getMonitorDetails', { body: { type: 'tcp', name, sched } });
    assert.equal(d.status, 200, `${sched}/${name}: ${d.text}`);
    assert.equal((await h.admin.request('POST', `/exec/enable/${sched}/${name}`)).status, 200);
    assert.equal((await h.admin.request('POST', `/exec/disable/${sched}/${name}`)).status, 200);
    const u = await h.admin.request('POST', `/tcp/update/${sched}/${name}`, { body: { location: sched } });
    assert.equal(u.status, 200, u.text);
  }
  assert.equal((await h.admin.request('POST', '/exec/enable/5MIN/def-cron')).status, 404);
  assert.equal((await h.admin.request('POST', '/exec/enable/CRON/def-tcp')).status, 404, 'no schedCron: not CRON');
  assert.equal((await h.admin.request('DELETE', '/delete/exec/cron/def-cron')).status, 200);
  // The OpenAPI says so on every {sched} parameter.
  const doc = (await h.admin.request('GET', '/docs/index.html/json')).body;
  const param = doc.paths['/exec/enable/{sched}/{name}'].post.parameters.find(
    (p: { name: string }) => p.name === 'sched',
  );
  assert.match(param.schema?.description ?? param.description, /CRON/);
});

test('run now runs a monitor in state off (a manual test) and says so; it still never runs on schedule', async () => {
  const c = await create('tcp', { name: 'def-off', state: 'off', ip: '127.0.0.1', port: '9' });
  assert.equal(c.status, 201, c.text);
  for (const show of ['show', 'hide']) {
    const r = await h.admin.request('GET', `/monitor/run/def-off/${show}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.state, 'off');
    assert.match(r.body.note, /off: run by hand only/);
  }
  const d = await h.admin.request('POST', '/getMonitorDetails', {
    body: { type: 'tcp', name: 'def-off', sched: '5MIN' },
  });
  assert.equal(d.body.schedule.nextDueMs, null);
  const on = await h.admin.request('GET', '/monitor/run/def-tcp/hide');
  assert.equal(on.body.state, 'on');
  assert.equal(on.body.note, undefined);
});

test('emailOnF "true" turns notifyStatus on; warnings say when no alert can go out', async () => {
  const base = { ip: '127.0.0.1', port: '9', state: 'off', emailR: 'ops@example.com' };
  const a = await create('tcp', { name: 'def-mail', ...base, emailOnF: 'true' });
  assert.equal(a.status, 201, a.text);
  assert.equal(a.body.monitor.notifyStatus, 'on');
  assert.deepEqual(a.body.warnings, ['SMTP is not enabled (POST /setsmtpvault): email alerts cannot be sent yet']);
  const muted = await create('tcp', { name: 'def-muted', ...base, emailOnF: 'true', notifyStatus: 'off' });
  assert.equal(muted.status, 201, muted.text);
  assert.equal(muted.body.monitor.notifyStatus, 'off');
  assert.match(muted.body.warnings.join(' '), /notifyStatus is off: this monitor sends no alert, email included/);
  // Created without alerts, then an update asks for mail: notify follows.
  const later = await create('tcp', { name: 'def-later', ...base });
  assert.equal(later.body.monitor.notifyStatus, 'off');
  assert.equal(later.body.warnings, undefined);
  const u = await h.admin.request('POST', '/tcp/update/5MIN/def-later', { body: { emailOnF: 'true' } });
  assert.equal(u.body.monitor.notifyStatus, 'on');
  const noTo = await create('tcp', { name: 'def-noto', ip: '127.0.0.1', port: '9', state: 'off', emailOnF: 'true' });
  assert.match(noTo.body.warnings.join(' '), /emailR is empty/);
  const bad = await create('tcp', { name: 'def-bad', ...base, emailR: 'ops@example.com, not an address' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, 'body.emailR');
});

test('timezone setting: validated, applies live, next run shown as local time with its offset', async () => {
  const bad = await h.admin.request('POST', '/updateSetting', { body: { timezone: 'Mars/Olympus_Mons' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, 'body.timezone');
  const c = await create('tcp', { name: 'def-tz', ip: '127.0.0.1', port: '9', schedCron: '0 9 * * *' });
  assert.equal(c.status, 201, c.text);
  const details = async () =>
    (await h.admin.request('POST', '/getMonitorDetails', { body: { type: 'tcp', name: 'def-tz', sched: 'CRON' } })).body
      .schedule;
  const utc = await details();
  assert.equal(utc.timezone, 'UTC');
  assert.match(utc.nextDueIso, /T09:00:0\d\.\d{3}\+00:00$/);
  assert.equal(new Date(utc.nextDueIso).getTime(), utc.nextDueMs);
  assert.ok(utc.offsetMs < 5000, `an explicit cron runs within 5 s of its time (offset ${utc.offsetMs})`);
  const ok = await h.admin.request('POST', '/updateSetting', { body: { timezone: 'Asia/Kolkata' } });
  assert.equal(ok.status, 200, ok.text);
  const ist = await details();
  assert.equal(ist.timezone, 'Asia/Kolkata');
  assert.match(ist.nextDueIso, /T09:00:0\d\.\d{3}\+05:30$/);
  assert.equal(new Date(ist.nextDueIso).getTime(), ist.nextDueMs);
  assert.equal((new Date(ist.nextDueMs).getUTCHours() * 60 + new Date(ist.nextDueMs).getUTCMinutes()) % 1440, 210);
  await h.admin.request('POST', '/updateSetting', { body: { timezone: 'UTC' } });
});
