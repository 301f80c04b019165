/**
 * The upgrade test: every committed fixture under test/fixtures/upgrade/<version>/ (a DATA_DIR written by an older
 * build, see make-fixture.ts) is copied, opened by the current code (both services), migrated, and read back in full:
 * users, tokens and revocations, settings, secrets, monitors of every type, alert state and channels, maintenance,
 * every history result, the agent's settings and discovery data. A second start runs no migration; a store marked by
 * a newer build is refused with nothing written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';
import { createAgentService } from '../../src/agent/service.js';
import { openLmdbStore } from '../../src/core/storage/lmdb-store.js';
import { META_BUCKET, FORMAT_KEY, readFormat, StoreTooNewError } from '../../src/core/storage/migrations.js';
import { CORE_MIGRATIONS } from '../../src/core/platform/core-migrations.js';
import { MONITOR_MIGRATIONS } from '../../src/monitor/migrations.js';
import { DBNAMES } from '../../src/monitor/history/types.js';
import { certsFrom, HttpsClient } from '../helpers/https-client.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'upgrade');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'upgrade-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function copyFixture(version: string, as: string): string {
  const dir = path.join(tmp, as);
  fs.cpSync(path.join(fixtures, version, 'data-dir'), dir, { recursive: true });
  return dir;
}

const env = (dataDir: string) => ({ DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_STDOUT: 'false', LOG_LEVEL: 'warn' });
const monitorCfg = (d: string) => readConfig('monitor', { ...env(d), MONITOR_PORT: '0' });
const agentCfg = (d: string) => readConfig('agent', { ...env(d), AGENT_PORT: '0' });
const sorted = (xs: string[]) => [...xs].sort();

for (const version of fs.readdirSync(fixtures).sort()) {
  const expected = JSON.parse(fs.readFileSync(path.join(fixtures, version, 'expected.json'), 'utf8'));
  const pw = expected.adminPassword as string;

  describe(`upgrade from fixture ${version}`, () => {
    const dataDir = copyFixture(version, version);

    test('the monitor service migrates the store (backup first) and reads everything back', async () => {
      const svc = await createMonitorService(monitorCfg(dataDir));
      const url = await svc.start();
      const c = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
      try {
        const m = svc.platform.migration;
        const known = [...CORE_MIGRATIONS, ...MONITOR_MIGRATIONS].map((x) => x.id);
        assert.equal(m.version, known.length);
        if (m.ran.length > 0) assert.ok(m.backupFile && fs.existsSync(m.backupFile), 'backed up before migrating');
        await c.login('admin', pw);
        const get = async (p: string) => {
          const r = await c.request('GET', p);
          assert.equal(r.status, 200, `${p}: ${r.text}`);
          return r.body;
        };
        assert.deepEqual(sorted((await get('/api/users')).map((u: any) => u.username)), sorted(expected.users));
        const monitors = (await get('/monitors')).map((x: any) => ({ name: x.name, type: x.type }));
        assert.deepEqual(
          sorted(monitors.map((x: any) => `${x.type}/${x.name}`)),
          sorted(expected.monitors.map((x: any) => `${x.type}/${x.name}`)),
        );
        const settings = await get('/setting');
        for (const [k, v] of Object.entries(expected.settings)) assert.equal(settings[k], v, `setting ${k}`);
        const secrets = (await get('/secrets')).map((s: any) => s.name);
        for (const s of expected.secrets) assert.ok(secrets.includes(s), `secret ${s} listed`);
        const problems = (await get('/alerting/problems')).map((p: any) => p.monitor);
        assert.deepEqual(sorted(problems), sorted(expected.problems), 'open problems (alert state) kept');
        const windows = (await get('/maintenance')).map((w: any) => w.name);
        assert.deepEqual(windows, expected.maintenance);
        const channels = await get('/alerting/channels');
        assert.ok(JSON.stringify(channels).includes('webhook'), 'the webhook channel is configured');
        const long = expected.monitor.longToken as string;
        if ((decodeJwt(long).exp ?? 0) * 1000 > Date.now())
          assert.equal((await c.request('GET', '/uptime', { token: long })).status, 200, 'the 1-year token works');
        const revoked = await c.request('GET', '/uptime', { token: expected.monitor.revokedToken });
        assert.equal(revoked.status, 401, 'the revoked token stays revoked');
        for (const type of DBNAMES) {
          const name = `fx-${type}`;
          const got = JSON.parse(JSON.stringify(await svc.history.recent(type, name, 1000)));
          // A type added after the fixture was written (push) has no history in it.
          assert.deepEqual(got, expected.monitor.history[name] ?? [], `history of ${name}`);
        }
      } finally {
        c.close();
        await svc.stop();
      }
    });

    test('the agent migrates its store and reads its settings and discovery data back', async () => {
      const svc = await createAgentService(agentCfg(dataDir), { schedule: false });
      const url = await svc.start();
      const c = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
      try {
        assert.ok(svc.platform.migration.version > 0);
        await c.login('admin', pw, '/api/auth');
        const s = (await c.request('GET', '/api/setting')).body;
        for (const [k, v] of Object.entries(expected.agent.settings)) assert.equal(s[k], v, `agent setting ${k}`);
        for (const [b, data] of Object.entries(expected.agent.data)) {
          const r = await c.request('GET', `/v1/db/discovery/bucket/${b}/allJSON`);
          assert.equal(r.status, 200, r.text);
          assert.deepEqual(r.body, data, `agent bucket ${b}`);
        }
      } finally {
        c.close();
        await svc.stop();
      }
    });

    test('a second start runs no migration and takes no backup', async () => {
      const before = fs.existsSync(path.join(dataDir, 'backups')) ? fs.readdirSync(path.join(dataDir, 'backups')) : [];
      const svc = await createMonitorService(monitorCfg(dataDir));
      try {
        assert.deepEqual(svc.platform.migration.ran, []);
        assert.equal(svc.platform.migration.backupFile, undefined);
      } finally {
        await svc.stop();
      }
      const now = fs.existsSync(path.join(dataDir, 'backups')) ? fs.readdirSync(path.join(dataDir, 'backups')) : [];
      assert.deepEqual(now, before);
    });
  });
}

test('a store marked by a newer build is refused with a clear message and left as it was', async () => {
  const dataDir = copyFixture('v1', 'newer');
  const storePath = path.join(dataDir, 'monitor-db');
  const st = await openLmdbStore({ path: storePath });
  const future = {
    metaVersion: 1,
    version: 99,
    applied: [{ id: '2999-01-01-from-the-future', atMs: 1 }],
    formats: {},
    writtenBy: 'monitor 99.0.0',
  };
  await st.bucket(META_BUCKET).put(FORMAT_KEY, future);
  const users = await st.bucket('users').count();
  await st.close();
  await assert.rejects(
    createMonitorService(monitorCfg(dataDir)),
    (e: unknown) =>
      e instanceof StoreTooNewError && /newer version/.test(e.message) && /from-the-future/.test(e.message),
  );
  const again = await openLmdbStore({ path: storePath });
  assert.deepEqual(await readFormat(again), future, 'the format record is untouched');
  assert.equal(await again.bucket('users').count(), users);
  await again.close();
  assert.equal(fs.existsSync(path.join(dataDir, 'backups')), false, 'nothing written beside the store either');
});
