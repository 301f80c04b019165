/**
 * tcp monitors with a `tls` mode (implicit TLS and the STARTTLS of SMTP, IMAP, POP3, LDAP, PostgreSQL, MySQL) read the
 * certificate and judge its expiry with url's levels; GET /certificates lists every certificate the checks see,
 * soonest expiry first, with its monitors, and survives a restart. Real service over HTTPS; protocol servers from
 * test/support/starttls-servers.fixture.ts; the real PostgreSQL and MariaDB of CI (TLS off there) must refuse politely.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeTestCerts, startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';
import { startProtoServer, type Proto } from '../support/starttls-servers.fixture.js';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';

const PROTOS: Proto[] = ['tls', 'smtp', 'imap', 'pop3', 'ldap', 'postgres', 'mysql'];

describe('tcp tls modes and the certificate inventory', () => {
  let mon: MonitorHarness;
  let http: HttpTargets;
  const servers: Array<{ port: number; close(): Promise<void> }> = [];
  const ports = new Map<string, number>();
  const soon = makeTestCerts(10); // expires in 10 days: MAJOR

  before(async () => {
    mon = await startMonitor();
    for (const p of PROTOS) {
      const s = await startProtoServer(p, { cert: soon.serverCertPem, key: soon.serverKeyPem });
      servers.push(s);
      ports.set(p, s.port);
    }
    const refusing = await startProtoServer('smtp', { cert: soon.serverCertPem, key: soon.serverKeyPem }, false);
    servers.push(refusing);
    ports.set('smtp-plain', refusing.port);
    http = await startHttpTargets({ serverCertDays: 200 });
  });
  after(async () => {
    for (const s of servers) await s.close();
    await http.close();
    await mon.stop();
  });

  const create = (name: string, fields: Record<string, string>) =>
    mon.admin.request('POST', '/tcp/create', { body: { name, ip: '127.0.0.1', ...fields } });
  const run = async (name: string) => (await mon.admin.request('GET', `/monitor/run/${name}/show`)).body;

  for (const p of PROTOS) {
    test(`tls=${p}: the certificate expiring in 10 days makes the run MAJOR`, async () => {
      const c = await create(`tls-${p}`, { port: String(ports.get(p)), tls: p, ignoreTlsErrors: 'true' });
      assert.equal(c.status, 201, JSON.stringify(c.body));
      const r = await run(`tls-${p}`);
      assert.equal(r.status, 'MAJOR', JSON.stringify(r));
      assert.ok(r.metrics.certDaysLeft > 9 && r.metrics.certDaysLeft <= 10, String(r.metrics.certDaysLeft));
      assert.equal(r.details.tlsMode, p);
      assert.equal(r.details.cert.subject, 'localhost');
      assert.match(
        r.message,
        new RegExp(`TLS \\(${p}, TLSv1\\.[23]\\): certificate localhost expires in 9\\.\\d days`),
      );
    });
  }

  test('an untrusted chain is ERROR unless ignoreTlsErrors; a server without STARTTLS is ERROR with why', async () => {
    await create('tls-untrusted', { port: String(ports.get('tls')), tls: 'tls' });
    const r = await run('tls-untrusted');
    assert.equal(r.status, 'ERROR');
    assert.match(r.message, /TLS \(tls\): (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/);
    await create('tls-no-starttls', { port: String(ports.get('smtp-plain')), tls: 'smtp' });
    const n = await run('tls-no-starttls');
    assert.equal(n.status, 'ERROR');
    assert.match(n.message, /SMTP: the server does not offer STARTTLS/);
    const bad = await create('tls-bad-mode', { port: '25', tls: 'gopher' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.field, /(^|\.)tls$/);
  });

  test('the real PostgreSQL and MariaDB without TLS refuse the upgrade their own way', async () => {
    await create('tls-real-pg', { port: '5432', tls: 'postgres', ignoreTlsErrors: 'true' });
    const pg = await run('tls-real-pg');
    assert.equal(pg.status, 'ERROR');
    assert.match(pg.message, /PostgreSQL: the server does not accept SSL \(answered N\)/);
    await create('tls-real-mysql', { port: '3306', tls: 'mysql', ignoreTlsErrors: 'true' });
    const my = await run('tls-real-mysql');
    assert.equal(my.status, 'ERROR');
    assert.match(my.message, /MySQL: the server does not offer SSL/);
  });

  test('GET /certificates: soonest first, with its monitors; readonly may read it; deleting monitors removes them', async () => {
    const u = await mon.admin.request('POST', '/url/create', {
      body: {
        name: 'https-later',
        display_name: 'later',
        sched: '5MIN',
        state: 'on',
        probe: 'p',
        url: `${http.httpsUrl}/ok`,
        ignoreTlsErrors: 'true',
      },
    });
    assert.equal(u.status, 201, JSON.stringify(u.body));
    assert.equal((await run('https-later')).status, 'OK');
    await mon.admin.request('POST', '/api/users', {
      body: { username: 'cert-reader', password: 'a-Long-enough-pass-42', group: 'readonly' },
    });
    const ro = mon.client();
    await ro.login('cert-reader', 'a-Long-enough-pass-42');
    const list = (await ro.request('GET', '/certificates')).body as Array<Record<string, any>>;
    assert.equal(list.length, 2, JSON.stringify(list));
    assert.ok(list[0]!.validToMs < list[1]!.validToMs, 'soonest expiry first');
    assert.equal(list[0]!.level, 'MAJOR');
    assert.equal(list[1]!.level, 'OK');
    assert.match(list[0]!.keyType, /^EC /);
    assert.ok(list[0]!.sans.includes('localhost') && list[0]!.sans.includes('127.0.0.1'));
    assert.deepEqual(
      list[0]!.monitors.map((m: { name: string }) => m.name).sort(),
      [...PROTOS.map((p) => `tls-${p}`), 'tls-untrusted'].sort(),
    );
    assert.equal(list[1]!.monitors[0].sched, '5MIN', 'each monitor comes with its sched (for its page)');
    assert.deepEqual(
      list[1]!.monitors.map((m: { name: string }) => m.name),
      ['https-later'],
    );
    const within = (await ro.request('GET', '/certificates?withinDays=30')).body as unknown[];
    assert.equal(within.length, 1);
    assert.equal((await ro.request('GET', '/certificates?withinDays=soon')).status, 400);
    await mon.admin.request('DELETE', '/delete/exec/5MIN/https-later');
    const after = (await ro.request('GET', '/certificates')).body as unknown[];
    assert.equal(after.length, 1, 'a certificate no monitor presents leaves the inventory');
  });

  test('the inventory survives a restart', async () => {
    const dataDir = mon.dataDir;
    await mon.stop({ keepData: true });
    mon = await startMonitor({ dataDir });
    const list = (await mon.admin.request('GET', '/certificates')).body as Array<{ monitors: unknown[] }>;
    assert.equal(list.length, 1);
    assert.equal(list[0]!.monitors.length, PROTOS.length + 1, 'the untrusted run saw the same certificate');
  });
});
