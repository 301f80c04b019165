/**
 * Persistence and sharing of DATA_DIR: a restarted monitor service keeps users, settings, tokens (and revocations),
 * certificates and keys; the monitor service and the discovery agent started at the same moment on one fresh DATA_DIR
 * both answer, share one generated PKI, and refuse each other's tokens.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { test } from 'node:test';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';
import { createAgentService } from '../../src/agent/service.js';
import { ADMIN_PASSWORD, startMonitor } from '../support/monitor.harness.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { peerSerial } from '../support/api.kit.js';

test('a restart keeps users, settings, tokens, revocations, certificates and keys', async () => {
  const h1 = await startMonitor();
  const dataDir = h1.dataDir;
  const file = (p: string) => fs.readFileSync(path.join(dataDir, p), 'utf8');
  let h2: Awaited<ReturnType<typeof startMonitor>> | undefined;
  try {
    assert.equal(
      (
        await h1.admin.request('POST', '/api/users', {
          body: { username: 'keeper', password: 'keeper-pass-1', group: 'user', email: 'k@example.com' },
        })
      ).status,
      201,
    );
    assert.equal(
      (await h1.admin.request('POST', '/updateSetting', { body: { concurrencyLimit: '33', autoThresholdRange: '24' } }))
        .status,
      200,
    );
    assert.equal(
      (
        await h1.admin.request('POST', '/setsmtpvault', {
          body: { smtpHost: 'smtp.example.com', smtpPassword: 'restart-smtp-pw' },
        })
      ).status,
      200,
    );
    const keeper = h1.client();
    const keeperToken = await keeper.login('keeper', 'keeper-pass-1', '/loginComponent');
    const long = await h1.admin.request('POST', '/loginComponent1Year', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
      token: null,
    });
    const revoked = await h1.admin.request('POST', '/loginComponent15Years', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
      token: null,
    });
    assert.equal((await h1.admin.request('DELETE', `/api/tokens/${decodeJwt(revoked.body.token).jti}`)).status, 200);
    const adminToken = h1.admin.token!;
    const before = {
      ca: file('certs/ca.pem'),
      server: file('certs/server.pem'),
      jwt: file('monitor-jwt-key.pem'),
      secret: file('monitor-secret.key'),
    };
    await h1.stop({ keepData: true });

    h2 = await startMonitor({ dataDir });
    const c = h2.client();
    const status = async (token: string) => (await c.request('GET', '/uptime', { token })).status;
    assert.equal(await status(adminToken), 200, 'the old admin token works');
    assert.equal(await status(keeperToken), 200, 'the old user token works');
    assert.equal(await status(long.body.token), 200, 'the 1-year token works');
    assert.equal(await status(revoked.body.token), 401, 'the revoked token stays revoked');
    const users = (await h2.admin.request('GET', '/api/users')).body;
    const k = users.find((u: { username: string }) => u.username === 'keeper');
    assert.equal(k.group, 'user');
    assert.equal(k.email, 'k@example.com');
    assert.equal(
      (await h2.client().request('POST', '/login', { body: { username: 'keeper', password: 'keeper-pass-1' } })).status,
      200,
    );
    const s = (await h2.admin.request('GET', '/setting')).body;
    assert.equal(s.concurrencyLimit, '33');
    assert.equal(s.autoThresholdRange, '24');
    assert.equal(s.smtp.smtpHost, 'smtp.example.com');
    assert.equal(s.smtp.smtpPassword, 'set');
    const tokens = (await h2.admin.request('GET', '/api/tokens')).body;
    assert.ok(
      tokens.some((t: { id: string; revoked: boolean }) => t.id === decodeJwt(long.body.token).jti && !t.revoked),
    );
    assert.deepEqual(
      {
        ca: file('certs/ca.pem'),
        server: file('certs/server.pem'),
        jwt: file('monitor-jwt-key.pem'),
        secret: file('monitor-secret.key'),
      },
      before,
    );
  } finally {
    if (h2) await h2.stop();
    else fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test("monitor and agent started at the same moment on one fresh DATA_DIR share one PKI and refuse each other's tokens", async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shared-data-'));
  const env = {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD,
  };
  const [mon, agent] = await Promise.all([
    createMonitorService(readConfig('monitor', env)),
    createAgentService(readConfig('agent', env), { schedule: false }),
  ]);
  const clients: HttpsClient[] = [];
  try {
    const [murl, aurl] = await Promise.all([mon.start(), agent.start()]);
    const certs = certsFrom(path.join(dataDir, 'certs'));
    const m = new HttpsClient(murl, certs);
    const a = new HttpsClient(aurl, certs);
    clients.push(m, a);
    for (const c of [m, a]) {
      const r = await c.request('GET', '/ping');
      assert.equal(r.status, 200);
      assert.equal(r.body.message, 'pong');
    }
    assert.equal(
      (await m.request('GET', '/getCert')).text,
      (await a.request('GET', '/getCert')).text,
      'one server certificate',
    );
    assert.equal(await peerSerial(murl, certs), await peerSerial(aurl, certs));
    const pemCount = (fs.readFileSync(path.join(dataDir, 'certs', 'ca.pem'), 'utf8').match(/BEGIN CERTIFICATE/g) ?? [])
      .length;
    assert.equal(pemCount, 1, 'ca.pem holds one CA certificate');
    assert.ok(!fs.existsSync(path.join(dataDir, 'certs', '.generating')), 'no leftover lock');
    // Each service keeps its own files.
    for (const f of [
      'monitor-jwt-key.pem',
      'agent-jwt-key.pem',
      'monitor-secret.key',
      'agent-secret.key',
      'monitor-db',
      'agent-db',
    ]) {
      assert.ok(fs.existsSync(path.join(dataDir, f)), f);
    }
    assert.notEqual(
      fs.readFileSync(path.join(dataDir, 'monitor-jwt-key.pem'), 'utf8'),
      fs.readFileSync(path.join(dataDir, 'agent-jwt-key.pem'), 'utf8'),
    );
    // Tokens are not interchangeable.
    const mt = await m.login('admin', ADMIN_PASSWORD);
    const at = await a.login('admin', ADMIN_PASSWORD, '/api/auth');
    assert.equal((await m.request('GET', '/setting', { token: mt })).status, 200);
    assert.equal(
      (await m.request('GET', '/setting', { token: at })).status,
      401,
      'an agent token is refused by the monitor',
    );
    assert.equal(
      (await a.request('GET', '/api/users', { token: mt })).status,
      401,
      'a monitor token is refused by the agent',
    );
    assert.equal((await a.request('GET', '/api/users', { token: at })).status, 200);
  } finally {
    for (const c of clients) c.close();
    await Promise.allSettled([mon.stop(), agent.stop()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
