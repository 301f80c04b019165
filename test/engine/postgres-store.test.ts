/**
 * The monitor service on the shared store: STORE_URL=postgres://… runs the whole service on PostgreSQL (users,
 * monitors, settings, history) and survives a restart, like the embedded default; dropping its namespace leaves no
 * table of it behind (the cluster's membership and lease tables included).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startMonitor } from '../support/monitor.harness.js';
import { dropPostgresNamespace } from '../../src/core/storage/postgres-store.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function pgReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

test('the monitor service runs on PostgreSQL and keeps its data across a restart', async (t) => {
  if (!(await pgReachable())) {
    if (process.env.CI === 'true') assert.fail(`PostgreSQL is not reachable at ${PG_URL}`);
    t.skip(`PostgreSQL is not reachable at ${PG_URL}`);
    return;
  }
  const namespace = `e2e_${randomBytes(4).toString('hex')}`;
  const env = { STORE_URL: PG_URL, STORE_NAMESPACE: namespace };
  let h = await startMonitor({ env });
  try {
    assert.equal(h.svc.platform.store.driver, 'postgres');
    assert.equal(
      (await h.admin.request('POST', '/sys/create', { body: { name: 'pg-sys', sched: '1MIN' } })).status,
      201,
    );
    const run = await h.admin.request('GET', '/monitor/run/pg-sys/show');
    assert.equal(run.status, 200);
    assert.ok(['OK', 'MINOR', 'MAJOR', 'CRITICAL'].includes(run.body.status), run.text);
    assert.equal((await h.admin.request('POST', '/updateSetting', { body: { dataRetention: '48' } })).status, 200);
    await h.svc.history.flush();
    await h.stop({ keepData: true });
    h = await startMonitor({ dataDir: h.dataDir, env });
    const list = await h.admin.request('GET', '/monitors');
    assert.deepEqual(
      list.body.map((m: { name: string }) => m.name),
      ['pg-sys'],
    );
    assert.equal(list.body[0].last.status, run.body.status);
    assert.equal((await h.admin.request('GET', '/setting')).body.dataRetention, '48');
    const stats = await h.admin.request('GET', '/v1/db/exec/stats');
    assert.equal(stats.status, 200);
    assert.ok(JSON.stringify(stats.body).includes('monitors'));
  } finally {
    await h.stop();
    await dropPostgresNamespace(PG_URL, namespace);
  }
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const left = await c.query(`SELECT tablename FROM pg_tables WHERE tablename LIKE '%\\_' || $1`, [namespace]);
    assert.deepEqual(
      left.rows.map((r) => r.tablename),
      [],
      'dropPostgresNamespace left tables behind',
    );
  } finally {
    await c.end();
  }
});
