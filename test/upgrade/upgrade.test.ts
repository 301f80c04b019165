/**
 * The upgrade test: every committed fixture under test/fixtures/upgrade/<version>/ (a DATA_DIR written by an older
 * build, see upgrade-store.fixture.ts) is copied, opened by the current code (both services), migrated, and read back in full:
 * users, tokens and revocations, settings, secrets, monitors of every type, alert state and channels, maintenance,
 * every history result, the agent's settings and discovery data. A second start runs no migration; a store marked by
 * a newer build is refused with nothing written.
 * The same for PostgreSQL stores: a fixture's `<service>-postgres.kvdump` (the old build's PostgresStore.backup, see
 * docs/storage.md) is loaded by the restore command into fresh namespaces, which the current services then open
 * (STORE_URL + STORE_NAMESPACE) with the fixture's keys and certificates; checked against expected-postgres.json.
 * PostgreSQL unreachable: skipped, or a failure with CI=true. The test database (with the namespaces) is dropped after.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';
import { createAgentService } from '../../src/agent/service.js';
import { openLmdbStore } from '../../src/core/storage/lmdb-store.js';
import { openStore } from '../../src/core/storage/open-store.js';
import type { StoreConfig } from '../../src/core/config/env.js';
import { META_BUCKET, FORMAT_KEY, readFormat, StoreTooNewError } from '../../src/core/storage/migrations.js';
import { withCoreMigrations } from '../../src/core/platform/core-migrations.js';
import { MONITOR_MIGRATIONS } from '../../src/monitor/migrations.js';
import { DBNAMES } from '../../src/monitor/history/types.js';
import { openSecretBox } from '../../src/core/secrets/secret-box.js';
import { FIXTURE_AGENT_SMTP } from './upgrade-store.fixture.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { createTestDatabase, reportUnavailable } from '../support/pg-database.fixture.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'upgrade');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'upgrade-test-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function copyFixture(version: string, as: string): string {
  const dir = path.join(tmp, as);
  fs.cpSync(path.join(fixtures, version, 'data-dir'), dir, { recursive: true });
  return dir;
}

type StoreEnv = Record<string, string>;
const env = (dataDir: string) => ({ DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_STDOUT: 'false', LOG_LEVEL: 'warn' });
const monitorCfg = (d: string, s: StoreEnv = {}) => readConfig('monitor', { ...env(d), MONITOR_PORT: '0', ...s });
const agentCfg = (d: string, s: StoreEnv = {}) => readConfig('agent', { ...env(d), AGENT_PORT: '0', ...s });
const sorted = (xs: string[]) => [...xs].sort();
const backups = (dataDir: string) =>
  fs.existsSync(path.join(dataDir, 'backups')) ? fs.readdirSync(path.join(dataDir, 'backups')) : [];

/** The migration ids a store's format record lists (none for a store from before format versioning). */
async function appliedIn(cfg: StoreConfig): Promise<Set<string>> {
  const store = await openStore(cfg);
  try {
    return new Set(((await readFormat(store))?.applied ?? []).map((a) => a.id));
  } finally {
    await store.close();
  }
}

function magic(file: string): string {
  const head = Buffer.alloc(10);
  const fd = fs.openSync(file, 'r');
  fs.readSync(fd, head, 0, 10, 0);
  fs.closeSync(fd);
  return head.toString();
}

/** Where one run of the upgrade suite finds its store: a DATA_DIR plus, for PostgreSQL, each service's store env. */
interface UpgradeTarget {
  dataDir: string;
  monitorStore: StoreEnv;
  agentStore: StoreEnv;
}

function upgradeSuite(expected: any, target: () => UpgradeTarget): void {
  const pw = expected.adminPassword as string;
  test('the monitor service migrates the store (backup first) and reads everything back', async () => {
    const { dataDir, monitorStore } = target();
    const known = withCoreMigrations(MONITOR_MIGRATIONS).migrations.map((x) => x.id);
    const applied = await appliedIn(monitorCfg(dataDir, monitorStore).store);
    const pending = known.filter((id) => !applied.has(id));
    const svc = await createMonitorService(monitorCfg(dataDir, monitorStore));
    const url = await svc.start();
    const c = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
    try {
      const m = svc.platform.migration;
      assert.equal(m.version, known.length);
      assert.deepEqual(m.ran, pending, 'every migration the old store lacked ran, in order');
      if (m.ran.length > 0) assert.ok(m.backupFile && fs.existsSync(m.backupFile), 'backed up before migrating');
      if (m.ran.length > 0 && monitorStore.STORE_URL) {
        assert.match(path.basename(m.backupFile!), /^monitor-pre-migration-.*\.kvdump$/);
        assert.equal(magic(m.backupFile!), 'SNTKVDUMP1', 'the pre-migration backup is a kvdump of the namespace');
      }
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
      // hist.chunk 2 (origins): the fixture's version-1 results have no origin (above: no probe/location/instance);
      // a new result in the same series names this instance, the old ones stay unknown beside it.
      svc.history.append('url', 'fx-url', { ts: Date.now(), status: 'OK', responseTimeMs: 1 });
      const [fresh, old] = await svc.history.recent('url', 'fx-url', 2);
      assert.deepEqual([fresh?.probe, fresh?.instance, old?.probe], ['default', os.hostname(), undefined]);
    } finally {
      c.close();
      await svc.stop();
    }
    if (svc.platform.migration.ran.length > 0) {
      const log = fs.readFileSync(path.join(dataDir, 'logs', 'monitor.log'), 'utf8');
      assert.match(log, /store needs migrations; backed up first/, 'the migration is logged');
    }
  });

  test('the agent migrates its store and reads its settings and discovery data back', async () => {
    const { dataDir, agentStore } = target();
    const svc = await createAgentService(agentCfg(dataDir, agentStore), { schedule: false });
    const url = await svc.start();
    const c = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
    try {
      assert.ok(svc.platform.migration.version > 0);
      await c.login('admin', pw, '/api/auth');
      const s = (await c.request('GET', '/api/setting')).body;
      for (const [k, v] of Object.entries(expected.agent.settings)) assert.equal(s[k], v, `agent setting ${k}`);
      assert.deepEqual([s.smtpServerName, s.smtpPwdSet], [FIXTURE_AGENT_SMTP.smtpServerName, 'true'], 'agent SMTP');
      for (const [b, data] of Object.entries(expected.agent.data)) {
        const r = await c.request('GET', `/v1/db/discovery/bucket/${b}/allJSON`);
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, data, `agent bucket ${b}`);
      }
    } finally {
      c.close();
      await svc.stop();
    }
    // SETTINGS format 2: the sealed SMTP password under smtpPwd (was smtpPwdSealed), still the fixture's password.
    const store = await openStore(agentCfg(dataDir, agentStore).store);
    try {
      const smtp = (await store.bucket('SETTINGS').get<Record<string, string>>('smtp'))!;
      assert.equal(smtp.smtpPwdSealed, undefined);
      assert.equal(openSecretBox(dataDir, 'agent').decrypt(smtp.smtpPwd!), FIXTURE_AGENT_SMTP.smtpPwd);
    } finally {
      await store.close();
    }
  });

  test('a second start runs no migration and takes no backup', async () => {
    const { dataDir, monitorStore } = target();
    const before = backups(dataDir);
    const svc = await createMonitorService(monitorCfg(dataDir, monitorStore));
    try {
      assert.deepEqual(svc.platform.migration.ran, []);
      assert.equal(svc.platform.migration.backupFile, undefined);
    } finally {
      await svc.stop();
    }
    assert.deepEqual(backups(dataDir), before);
  });
}

const readJson = (version: string, file: string) =>
  JSON.parse(fs.readFileSync(path.join(fixtures, version, file), 'utf8'));
const hasPgFixture = (v: string) => fs.existsSync(path.join(fixtures, v, 'monitor-postgres.kvdump'));
// A database of its own (dropped afterwards, with the namespaces in it) on the CI's PostgreSQL.
const pgDb = fs.readdirSync(fixtures).some(hasPgFixture) ? await createTestDatabase('upgrade') : undefined;
after(async () => {
  if (pgDb && 'drop' in pgDb) await pgDb.drop();
});
const repoRoot = path.join(fixtures, '..', '..', '..');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Loads `<service>-postgres.kvdump` into `namespace` with the operator's command (`npm run restore`'s source). */
async function restoreWithCli(version: string, service: string, dataDir: string, store: StoreEnv): Promise<void> {
  const file = path.join(fixtures, version, `${service}-postgres.kvdump`);
  const port = String(await freePort()); // the command refuses while something answers on the service's port
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/restore.ts', file, '--service', service], {
    cwd: repoRoot,
    env: { ...process.env, ...store, DATA_DIR: dataDir, MONITOR_PORT: port, AGENT_PORT: port },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, `restore ${service}: ${r.stdout}${r.stderr}`);
  assert.match(r.stdout, new RegExp(`into postgres namespace ${store.STORE_NAMESPACE} \\(\\d+ entries\\)`));
}

for (const version of fs.readdirSync(fixtures).sort()) {
  describe(`upgrade from fixture ${version}`, () => {
    const dataDir = copyFixture(version, version);
    upgradeSuite(readJson(version, 'expected.json'), () => ({ dataDir, monitorStore: {}, agentStore: {} }));
  });

  if (!hasPgFixture(version) || !pgDb) continue;
  describe(`upgrade from fixture ${version} on PostgreSQL`, () => {
    if ('unavailable' in pgDb) return reportUnavailable(pgDb.unavailable); // a failure with CI=true
    const t: UpgradeTarget = {
      dataDir: path.join(tmp, `${version}-postgres`),
      monitorStore: { STORE_URL: pgDb.url, STORE_NAMESPACE: `${version}_monitor` },
      agentStore: { STORE_URL: pgDb.url, STORE_NAMESPACE: `${version}_agent` },
    };
    before(async () => {
      // The fixture's keys and certificates (the PostgreSQL stores were written with the same ones), no LMDB store.
      fs.cpSync(path.join(fixtures, version, 'data-dir'), t.dataDir, {
        recursive: true,
        filter: (src) => !/(monitor|agent)-db$/.test(src),
      });
      await restoreWithCli(version, 'monitor', t.dataDir, t.monitorStore);
      await restoreWithCli(version, 'agent', t.dataDir, t.agentStore);
    });
    upgradeSuite(readJson(version, 'expected-postgres.json'), () => t);
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
