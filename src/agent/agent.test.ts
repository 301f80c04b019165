/**
 * The real agent on port 0 with a temporary DATA_DIR, against the real machine: process lookup by port, a watched
 * process killed → CRITICAL with an email to a real SMTP server, traversal payloads on both log downloads, reinit
 * during a cycle, validation of settings.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { readConfig } from '../core/config/env.js';
import { certsFrom, HttpsClient } from '../../test/support/https-client.kit.js';
import { createAgentService, type AgentService } from './service.js';

const PW = 'admin-pass-123';
let svc: AgentService;
let dataDir: string;
let url: string;
let admin: HttpsClient;
const mails: string[] = [];
let smtp: SMTPServer;
let smtpPort: number;

function rawGet(p: string, token: string | undefined): Promise<{ status: number; body: string }> {
  const certs = certsFrom(path.join(dataDir, 'certs'));
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: u.hostname,
        port: u.port,
        path: p,
        method: 'GET',
        ca: certs.ca,
        cert: certs.cert,
        key: certs.key,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('latin1') }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _s, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(Buffer.concat(chunks).toString('utf8'));
        cb();
      });
    },
  });
  smtp.listen(0, '127.0.0.1');
  await once(smtp.server, 'listening');
  smtpPort = (smtp.server.address() as { port: number }).port;
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-test-'));
  const cfg = readConfig('agent', {
    DATA_DIR: dataDir,
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'info',
    ADMIN_PASSWORD: PW,
  });
  svc = await createAgentService(cfg, { schedule: false, smtpTimeoutMs: 3000 });
  url = await svc.start();
  admin = new HttpsClient(url, certsFrom(cfg.certDir));
  await admin.login('admin', PW, '/api/auth');
  // Quiet the host-wide groups so only the watched items change status in these tests.
  const r = await admin.request('POST', '/updateSetting', {
    body: {
      discoCPUGMonEnabled: 'false',
      discoMEMGMonEnabled: 'false',
      discoLOADGMonEnabled: 'false',
      discoDISKGMonEnabled: 'false',
      discoSWAPGMonEnabled: 'false',
    },
  });
  assert.equal(r.status, 200, r.text);
});

after(async () => {
  admin?.close();
  await svc?.stop();
  smtp?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('ping, docs, auth: 401 without a token, token lifetime 15 min', async () => {
  assert.equal((await admin.request('GET', '/ping', { token: null })).body.message, 'pong');
  assert.equal((await admin.request('GET', '/docs/index.html', { token: null })).status, 200);
  assert.equal((await admin.request('GET', '/api/setting', { token: null })).status, 401);
  const t = await admin.request('POST', '/api/auth', { body: { username: 'admin', password: PW }, token: null });
  const lifeMs = Date.parse(t.body.expire) - Date.now();
  assert.ok(lifeMs > 14 * 60_000 && lifeMs <= 15 * 60_000, String(lifeMs));
  const y15 = await admin.request('POST', '/loginComponent15Years', {
    body: { username: 'admin', password: PW },
    token: null,
  });
  assert.ok(Date.parse(y15.body.expire) - Date.now() > 14 * 365 * 86_400_000);
});

test('getProcessByPort: a listener of this test is found live; 400 outside 1–65535; 404 when nobody listens', async () => {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  try {
    const r = await admin.request('GET', `/getProcessByPort/${port}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.pid, process.pid);
    assert.equal(r.body.name, 'node');
    assert.ok(r.body.cmdline.includes('node') && r.body.user && r.body.startTimeMs > 0 && r.body.rssBytes > 0);
  } finally {
    await new Promise((r) => server.close(r));
  }
  for (const bad of ['0', '65536', 'abc', '-1', '1e3'])
    assert.equal((await admin.request('GET', `/getProcessByPort/${bad}`)).status, 400, bad);
  assert.equal((await admin.request('GET', `/getProcessByPort/${port}`)).status, 404);
});

test('settings: validated, unknown keys 400, smtp password never returned', async () => {
  for (const body of [
    { nope: 'x' },
    { sched: '0MIN' },
    { sched: '5H' },
    { ports: '70000' },
    { discoCPUGFixedThreshMin: 'abc' },
    { discoCPUGFixedThreshMin: '99', discoCPUGFixedThreshMaj: '50' },
  ]) {
    assert.equal((await admin.request('POST', '/updateSetting', { body })).status, 400, JSON.stringify(body));
  }
  assert.equal((await admin.request('POST', '/updateSetting', { body: { sched: '10MIN' } })).status, 200);
  const s = await admin.request('POST', '/setsmtp', {
    body: {
      smtpEnabled: 'true',
      smtpServerName: '127.0.0.1',
      smtpPort: String(smtpPort),
      smtpUsername: '',
      smtpPwd: 's3cret-pw',
      smtpTLS: 'false',
      smtpFrom: 'agent@example.test',
      smtpTo: 'ops@example.test',
    },
  });
  assert.equal(s.status, 200, s.text);
  const got = await admin.request('GET', '/api/setting');
  assert.equal(got.body.sched, '10MIN');
  assert.ok(!got.text.includes('s3cret-pw'));
  assert.equal(got.body.smtpPwdSet, 'true');
  const check = await admin.request('POST', '/checkConnectIntegrators');
  assert.equal(check.status, 200);
  assert.equal(check.body.integrators[0].ok, true, check.text);
});

test('a watched process killed turns OK → CRITICAL and the alert reaches the SMTP server once', async () => {
  const name = `wsl${process.pid % 100000}`;
  const bin = path.join(dataDir, name);
  copyFileSync('/bin/sleep', bin);
  const child = spawn(bin, ['300'], { stdio: 'ignore' });
  await once(child, 'spawn');
  try {
    assert.equal((await admin.request('POST', '/updateSetting', { body: { processes: name } })).status, 200);
    const r1 = await admin.request('GET', '/runDiscovery');
    assert.equal(r1.status, 200, r1.text);
    assert.equal(r1.body.statuses[`${name}_cpu`], 'OK', r1.text);
    assert.equal(r1.body.watchedProcesses[0].count, 1);
  } finally {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  const r2 = await admin.request('GET', '/runDiscovery');
  assert.equal(r2.body.statuses[`${name}_cpu`], 'CRITICAL', r2.text);
  const st = await admin.request('GET', `/api/db/discovery/bucket/STATUS/key/${name}_cpu`);
  assert.equal(st.body.value.status, 'CRITICAL');
  const deadline = Date.now() + 15_000;
  while (!mails.some((m) => m.includes(`${name}_cpu`)) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  const ours = mails.filter((m) => m.includes(`${name}_cpu`));
  assert.ok(ours.length >= 1, 'alert mail received');
  assert.ok(ours[0]!.includes('CRITICAL'));
  // The status holds: another cycle sends nothing new for it.
  await admin.request('GET', '/runDiscovery');
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(mails.filter((m) => m.includes(`${name}_cpu`)).length, ours.length);
  const metrics = JSON.parse(readFileSync(path.join(dataDir, 'discover_metrics.json'), 'utf8'));
  assert.ok(Array.isArray(metrics.processes) && metrics.processes.length > 0);
  assert.equal((await admin.request('POST', '/updateSetting', { body: { processes: '' } })).status, 200);
});

test('log downloads: traversal payloads get 400/404 and no byte from outside the log folder', async () => {
  writeFileSync(path.join(dataDir, 'secret.log'), 'TOPSECRET');
  writeFileSync(path.join(dataDir, 'secret.log.gz'), 'TOPSECRET');
  const token = admin.token!;
  const ok = await rawGet('/discovery/logfile/server/agent.log', token);
  assert.equal(ok.status, 200);
  const abs = encodeURIComponent(path.join(dataDir, 'secret.log'));
  const payloads = [
    '..%2fsecret.log',
    '..%252fsecret.log',
    '%2e%2e%2fsecret.log',
    '%252e%252e%252fsecret.log',
    '..%5csecret.log',
    '..\\secret.log',
    abs,
    '%2fetc%2fpasswd',
    'secret.log%00.log',
    'agent.log%00',
    '....%2f%2fsecret.log',
    '.%2e/secret.log',
    '..%c0%afsecret.log',
    '%00',
  ];
  for (const base of ['/discovery/logfile/server/', '/serverlogfiles/']) {
    for (const p of payloads) {
      for (const variant of [p, p.endsWith('.log') ? `${p}.gz` : p]) {
        const r = await rawGet(base + variant, token);
        assert.ok([400, 404].includes(r.status), `${base}${variant} → ${r.status}`);
        assert.ok(!r.body.includes('TOPSECRET'), `${base}${variant} leaked`);
      }
    }
  }
  const tail = await admin.request('GET', '/partServerlogfile/64');
  assert.equal(tail.status, 200);
  assert.ok(tail.raw.length <= 64);
  for (const b of ['0', '-5', '1.5', 'x', '9'.repeat(16)])
    assert.equal((await admin.request('GET', `/partServerlogfile/${b}`)).status, 400, b);
  // N beyond the file's size (and beyond the 10 MiB cap) is clamped: the whole (small) log comes back.
  const logFile = path.join(dataDir, 'logs', 'agent.log');
  for (const b of ['10485761', '99999999999']) {
    const before = readFileSync(logFile);
    const r = await admin.request('GET', `/partServerlogfile/${b}`);
    assert.equal(r.status, 200, `${b}: ${r.text}`);
    assert.ok(before.length > 0 && before.length < 10_485_760);
    assert.deepEqual(r.raw.subarray(0, before.length), before, 'the whole file, from its first byte');
  }
});

test('reinit during a cycle leaves a consistent store; users and settings stay', async () => {
  await admin.request('POST', '/updateSetting', { body: { ports: '1' } });
  await admin.request('GET', '/runDiscovery');
  const [cycle, reinit] = await Promise.all([
    admin.request('GET', '/runDiscovery'),
    admin.request('POST', '/reinitDatabase'),
  ]);
  assert.equal(cycle.status, 200);
  assert.equal(reinit.status, 200, reinit.text);
  const stats = await admin.request('GET', '/v1/db/discovery/stats');
  const keys = Object.fromEntries(stats.body.buckets.map((b: { name: string; keys: number }) => [b.name, b.keys]));
  // Either the cycle landed after the reinit (its statuses present and complete) or before (nothing left).
  const status = await admin.request('GET', '/v1/db/discovery/bucket/STATUS/allJSON');
  if ((keys.STATUS ?? 0) > 0) {
    assert.equal(status.body.port_1.status, 'CRITICAL');
    assert.ok((keys.METRICS ?? 0) > 0);
  } else assert.deepEqual([status.status, status.body], [200, {}], 'an emptied bucket reads as {}');
  assert.ok(keys.users >= 1);
  assert.equal((await admin.request('GET', '/api/setting')).body.ports, '1');
  assert.equal((await admin.request('GET', '/runDiscovery')).status, 200);
  assert.equal(
    (await admin.request('GET', '/api/db/discovery/bucket/STATUS/key/port_1')).body.value.status,
    'CRITICAL',
  );
  assert.equal((await admin.request('GET', '/v1/db/discovery/bucket/users/allJSON')).status, 404);
  assert.equal((await admin.request('GET', '/api/db/discovery/bucket/STATUS/key/nope')).status, 404);
  const b = await admin.request('POST', '/backupDatabase');
  assert.equal(b.status, 200, b.text);
  assert.ok(existsSync(path.join(dataDir, 'backups', b.body.file)));
});

test('RBAC: a readonly user reads but cannot change settings or reinit', async () => {
  const c = await admin.request('POST', '/api/users', {
    body: { username: 'ro', password: 'readonly-pw-1', fullname: 'RO', group: 'readonly', enabled: 'true' },
  });
  assert.equal(c.status, 201, c.text);
  const ro = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
  try {
    await ro.login('ro', 'readonly-pw-1', '/api/auth');
    assert.equal((await ro.request('GET', '/api/setting')).status, 200);
    assert.equal((await ro.request('POST', '/updateSetting', { body: { sched: '5MIN' } })).status, 403);
    assert.equal((await ro.request('POST', '/reinitDatabase')).status, 403);
    assert.equal((await ro.request('GET', '/api/users')).status, 403);
  } finally {
    ro.close();
  }
  assert.equal((await admin.request('DELETE', '/api/users/ro')).status, 200);
});
