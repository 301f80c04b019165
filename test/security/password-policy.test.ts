/**
 * docs/security.md §19 (review: `aaaaaaaa` was accepted for an admin; the initial password file stayed after the
 * password changed). Through the HTTP API of both services: weak passwords are 400 naming `password` on create and on
 * change; a weak ADMIN_PASSWORD refuses a fresh start with a clear message; the generated initial password file,
 * shared by both services, is deleted once both services' admins have changed their password (and not before).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readConfig, type ServiceName } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';
import { createAgentService } from '../../src/agent/service.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { assertError } from '../support/api.kit.js';

const tmpDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'password-policy-'));
const cfgFor = (service: ServiceName, dataDir: string, adminPassword = '') =>
  readConfig(service, {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: adminPassword,
  });
const create = (service: ServiceName, dataDir: string, adminPassword = '') =>
  service === 'monitor'
    ? createMonitorService(cfgFor('monitor', dataDir, adminPassword))
    : createAgentService(cfgFor('agent', dataDir, adminPassword), { schedule: false });
const loginPath = (service: ServiceName) => (service === 'monitor' ? '/login' : '/api/auth');

test('a weak ADMIN_PASSWORD refuses a fresh start of either service, saying why', async () => {
  for (const service of ['monitor', 'agent'] as const) {
    for (const weak of ['aaaaaaaa', 'aaaaaaaaaaaaaaaa', 'abab-abab-abab']) {
      const dir = tmpDir();
      await assert.rejects(create(service, dir, weak), /ADMIN_PASSWORD is too weak: .*(12 characters|5 different)/);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('weak passwords are refused on create and change; the initial password file goes once both admins changed theirs', async () => {
  const dir = tmpDir();
  const mon = await create('monitor', dir);
  const agent = await create('agent', dir);
  const file = path.join(dir, 'initial-admin-password');
  const initial = fs.readFileSync(file, 'utf8').trim();
  const clients: HttpsClient[] = [];
  try {
    for (const [service, svc] of [
      ['monitor', mon],
      ['agent', agent],
    ] as const) {
      const c = new HttpsClient(await svc.start(), certsFrom(path.join(dir, 'certs')));
      clients.push(c);
      await c.login('admin', initial, loginPath(service));
      for (const weak of ['aaaaaaaa', 'aaaaaaaaaaaa', 'short-pw-1', 'abcabcabcabc']) {
        assertError(
          await c.request('POST', '/api/users', { body: { username: `weak-${service}`, password: weak } }),
          400,
          'password',
        );
        assertError(await c.request('PATCH', '/api/users', { body: { username: 'admin', password: weak } }), 400);
      }
      const ok = await c.request('POST', '/api/users', {
        body: { username: `strong-${service}`, password: 'correct-Horse-42', group: 'user' },
      });
      assert.equal(ok.status, 201, ok.text);
    }
    const [mc, ac] = clients as [HttpsClient, HttpsClient];
    assert.ok(fs.existsSync(file), 'the file exists while an admin still has its password');
    const r1 = await mc.request('PATCH', '/api/users', { body: { username: 'admin', password: 'monitor-Admin-2026' } });
    assert.equal(r1.status, 200, r1.text);
    assert.ok(fs.existsSync(file), 'the agent admin still uses the initial password');
    await ac.login('admin', initial, '/api/auth');
    const r2 = await ac.request('PATCH', '/api/users', { body: { username: 'admin', password: 'agent-Admin-2026!' } });
    assert.equal(r2.status, 200, r2.text);
    assert.equal(fs.existsSync(file), false, 'deleted once no admin has that password');
    assert.equal(fs.existsSync(`${file}.users`), false);
  } finally {
    for (const c of clients) c.close();
    await mon.stop();
    await agent.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
