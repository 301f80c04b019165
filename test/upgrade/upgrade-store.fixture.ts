/**
 * Writes the upgrade fixture of the current on-disk format: `npx tsx test/upgrade/upgrade-store.fixture.ts [version]` →
 * test/fixtures/upgrade/<version>/ (default v1) with `data-dir/` (one DATA_DIR: both services' LMDB stores, certificates,
 * keys) and `expected.json` (what upgrade.test.ts must read back). Filled through the real services and their APIs:
 * users of each group, a tracked 1-year token and a revoked one, settings and sealed SMTP passwords, a secret, a
 * monitor of every type, an alert channel, a maintenance window, alert state, results over several past hours (plus
 * rows of the open hour that stay in the WAL), agent settings and discovery data. Keys in it are test-only.
 * A format change keeps the old fixture and adds a new one (docs/storage.md "Adding a migration").
 * `PG_URL=postgres://… npx tsx test/upgrade/upgrade-store.fixture.ts <version> --postgres` then adds the PostgreSQL variant to
 * that fixture: the same fill with both services on PostgreSQL (a throw-away database, the fixture's keys and
 * certificates), each namespace dumped by its own `backup()` into `<service>-postgres.kvdump`, what was read back in
 * `expected-postgres.json`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeJwt } from 'jose';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';
import { createAgentService } from '../../src/agent/service.js';
import { openStore } from '../../src/core/storage/open-store.js';
import { createTestDatabase } from '../support/pg-database.fixture.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { DBNAMES, STATUSES } from '../../src/monitor/history/types.js';

export const FIXTURE_ADMIN_PASSWORD = 'fixture-admin-pass-1';
/** The agent's SMTP configuration every fixture stores (the password sealed at rest). */
export const FIXTURE_AGENT_SMTP = { smtpServerName: 'smtp.example.com', smtpPwd: 'fx-pw' };
const HOUR_MS = 3_600_000;
const here = path.dirname(fileURLToPath(import.meta.url));

/** One monitor of every type (all off: nothing runs while the fixture is written or read). */
export const FIXTURE_MONITORS: Record<string, Record<string, unknown>> = {
  exec: { steps: [{ name: 'open', action: 'goto', url: 'http://127.0.0.1:9/login' }], timeout: '30' },
  url: { url: 'http://127.0.0.1:9/x', display_name: 'u', sched: '5MIN', probe: 'p' },
  api: { api: 'http://127.0.0.1:9/x', typeApi: 'POST', basicAuthUser: 'u', basicAuthPwd: 'fixture-api-pw' },
  tcp: { ip: '127.0.0.1', port: '9' },
  ping: { ip: '127.0.0.1' },
  nslookup: { domain: 'www.lab.test', recordType: 'A', dnsServer: '127.0.0.1:15353' },
  snmp: {
    ip: '127.0.0.1',
    port: '16161',
    version: 'v2c',
    community: 'fixture-community',
    snmpOid: '1.3.6.1.2.1.1.5.0',
  },
  db: { dbType: 'postgres', dbIp: '127.0.0.1', dbPort: '5432', dbUser: 'u', dbPwd: 'fixture-db-pw', query: 'select 1' },
  sys: {},
};

async function ok(p: Promise<{ status: number; text: string; body: any }>, what: string): Promise<any> {
  const r = await p;
  if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.text}`);
  return r.body;
}

/** The store a fill writes to: the DATA_DIR's LMDB by default, or a PostgreSQL namespace plus the dump to write. */
interface PgTarget {
  url: string;
  namespace: string;
  dumpFile: string;
}
const storeEnv = (pg?: PgTarget) => (pg ? { STORE_URL: pg.url, STORE_NAMESPACE: pg.namespace } : {});

/** The store's own backup of a PostgreSQL namespace (a .kvdump), taken after the service stopped. */
async function dumpNamespace(pg: PgTarget | undefined): Promise<void> {
  if (!pg) return;
  const store = await openStore({ driver: 'postgres', url: pg.url, namespace: pg.namespace });
  fs.rmSync(pg.dumpFile, { force: true });
  await store.backup(pg.dumpFile);
  await store.close();
}

async function fillMonitor(dataDir: string, nowMs: number, pg?: PgTarget) {
  const env = {
    ...storeEnv(pg),
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
  };
  const cfg = readConfig('monitor', { ...env, ADMIN_PASSWORD: FIXTURE_ADMIN_PASSWORD });
  const svc = await createMonitorService(cfg);
  const url = await svc.start();
  const c = new HttpsClient(url, certsFrom(cfg.certDir));
  await c.login('admin', FIXTURE_ADMIN_PASSWORD);
  const admin = (m: string, p: string, body?: unknown) => ok(c.request(m, p, { body }), `${m} ${p}`);
  for (const [u, group] of [
    ['fx-user', 'user'],
    ['fx-viewer', 'readonly'],
  ]) {
    await admin('POST', '/api/users', { username: u, password: `${u}-pass-1`, group, email: `${u}@example.com` });
  }
  const login = (p: string) => admin('POST', p, { username: 'admin', password: FIXTURE_ADMIN_PASSWORD });
  const longToken = (await login('/loginComponent1Year')).token as string;
  const revoked = (await login('/loginComponent15Years')).token as string;
  await admin('DELETE', `/api/tokens/${decodeJwt(revoked).jti}`);
  await admin('POST', '/updateSetting', { concurrencyLimit: '17', dataRetention: String(24 * 3650) });
  await admin('POST', '/setsmtpvault', { smtpHost: 'smtp.example.com', smtpPassword: 'fixture-smtp-pw' });
  await admin('POST', '/secrets/fixture_secret', { value: 'fixture-secret-value' });
  await admin('POST', '/alerting/channels/webhook', { enabled: 'true', url: 'https://127.0.0.1:9/hook' });
  await admin('POST', '/maintenance', { name: 'fx-window', monitors: 'fx-sys', from: '1', to: '2' });
  for (const [type, fields] of Object.entries(FIXTURE_MONITORS)) {
    await admin('POST', `/${type}/create`, { name: `fx-${type}`, state: 'off', ...fields });
  }
  // Alert state: a DOWN run of a notifying monitor opens a problem (its delivery fails and stays queued).
  await admin('POST', '/tcp/update/5MIN/fx-tcp', { notifyStatus: 'on', notifyAfter: '1', notifyChannels: 'webhook' });
  await ok(c.request('GET', '/monitor/run/fx-tcp/show'), 'run fx-tcp');
  // Results: one every 10 minutes over the 6 past hours (closed chunks) and 3 in the open hour (the WAL).
  const openHour = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  for (const [i, type] of DBNAMES.entries()) {
    const name = `fx-${type}`;
    let n = 0;
    for (let ts = openHour - 6 * HOUR_MS + i * 1000; ts < openHour + 3 * 600_000; ts += 600_000) {
      const status = STATUSES[n % 5]!;
      svc.history.append(type, name, {
        ts,
        status,
        responseTimeMs: 10 + n,
        metrics: { value: n },
        message: n % 4 === 0 ? `message ${n}` : undefined,
      });
      n++;
    }
  }
  // What today's code reads back (newest first, every field) is what the upgraded code must read back.
  const history: Record<string, unknown[]> = {};
  for (const type of DBNAMES) history[`fx-${type}`] = await svc.history.recent(type, `fx-${type}`, 1000);
  c.close();
  await svc.stop();
  await dumpNamespace(pg);
  return { history, longToken, revokedToken: revoked, openHourMs: openHour };
}

async function fillAgent(dataDir: string, pg?: PgTarget) {
  const env = {
    ...storeEnv(pg),
    DATA_DIR: dataDir,
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
  };
  const cfg = readConfig('agent', { ...env, ADMIN_PASSWORD: FIXTURE_ADMIN_PASSWORD });
  const svc = await createAgentService(cfg, { schedule: false });
  const url = await svc.start();
  const c = new HttpsClient(url, certsFrom(cfg.certDir));
  await c.login('admin', FIXTURE_ADMIN_PASSWORD, '/api/auth');
  await ok(c.request('POST', '/updateSetting', { body: { sched: '7MIN', ports: '22,443' } }), 'agent settings');
  await ok(c.request('POST', '/setsmtp', { body: FIXTURE_AGENT_SMTP }), 'smtp');
  for (let i = 0; i < 2; i++) await ok(c.request('GET', '/runDiscovery'), 'runDiscovery');
  const buckets: Record<string, number> = {};
  for (const b of await svc.platform.store.buckets()) buckets[b.name] = b.keys;
  const data: Record<string, unknown> = {};
  for (const b of ['METRICS', 'THRESHOLDS', 'STATUS', 'STATUS_HISTORY']) {
    data[b] = await ok(c.request('GET', `/v1/db/discovery/bucket/${b}/allJSON`), `allJSON ${b}`);
  }
  c.close();
  await svc.stop();
  await dumpNamespace(pg);
  return { buckets, data };
}

function expectedOf(version: string, nowMs: number, monitor: unknown, agent: object) {
  return {
    version,
    writtenAtMs: nowMs,
    adminPassword: FIXTURE_ADMIN_PASSWORD,
    users: ['admin', 'fx-user', 'fx-viewer'],
    monitors: Object.keys(FIXTURE_MONITORS).map((t) => ({ name: `fx-${t}`, type: t })),
    settings: { concurrencyLimit: '17' },
    secrets: ['fixture_secret'],
    problems: ['fx-tcp'],
    maintenance: ['fx-window'],
    monitor,
    agent: { ...agent, settings: { sched: '7MIN', ports: '22,443' } },
  };
}

export async function makeFixture(version: string): Promise<string> {
  const out = path.join(here, '..', 'fixtures', 'upgrade', version);
  fs.rmSync(out, { recursive: true, force: true });
  const dataDir = path.join(out, 'data-dir');
  fs.mkdirSync(dataDir, { recursive: true });
  const nowMs = Date.now();
  const monitor = await fillMonitor(dataDir, nowMs);
  const agent = await fillAgent(dataDir);
  fs.rmSync(path.join(dataDir, 'logs'), { recursive: true, force: true });
  for (const db of ['monitor-db', 'agent-db']) fs.rmSync(path.join(dataDir, db, 'lock.mdb'), { force: true });
  const expected = expectedOf(version, nowMs, monitor, agent);
  fs.writeFileSync(path.join(out, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
  return out;
}

/**
 * Adds `<service>-postgres.kvdump` and `expected-postgres.json` to an existing fixture (same keys and certificates),
 * filled in a throw-away database on the PostgreSQL server PG_URL names.
 */
export async function makePostgresFixture(version: string): Promise<string> {
  const out = path.join(here, '..', 'fixtures', 'upgrade', version);
  const db = await createTestDatabase('fixture');
  if ('unavailable' in db) throw new Error(db.unavailable);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fixture-pg-'));
  fs.cpSync(path.join(out, 'data-dir'), dataDir, { recursive: true, filter: (f) => !/(monitor|agent)-db$/.test(f) });
  const pg = (service: string) => ({
    url: db.url,
    namespace: service,
    dumpFile: path.join(out, `${service}-postgres.kvdump`),
  });
  try {
    const nowMs = Date.now();
    const monitor = await fillMonitor(dataDir, nowMs, pg('monitor'));
    const agent = await fillAgent(dataDir, pg('agent'));
    const expected = { ...expectedOf(version, nowMs, monitor, agent), store: 'postgres' };
    fs.writeFileSync(path.join(out, 'expected-postgres.json'), JSON.stringify(expected, null, 2) + '\n');
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [version = 'v1', flag] = process.argv.slice(2);
  if (flag !== undefined && flag !== '--postgres')
    throw new Error('usage: upgrade-store.fixture.ts [version] [--postgres]');
  const out = flag ? await makePostgresFixture(version) : await makeFixture(version);
  console.log(`fixture written to ${out}`);
}
