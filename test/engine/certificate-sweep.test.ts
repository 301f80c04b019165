/**
 * The certificate inventory's start-up sweep: a record left in the `certificates` bucket for a monitor that no longer
 * exists (versions before 78878e4 wrote one when a run outlived its deleted monitor) is deleted from the store when
 * the service starts, and the record of a monitor that exists is kept. Real service over HTTPS on LMDB; then two
 * instances starting at once on one PostgreSQL database, both sweeping the same records.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CERT_RECORD_VERSION, type MonitorCertRecord } from '../../src/monitor/certificates/cert-inventory.js';
import { sharedDataDir, startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable } from '../support/pg-database.fixture.js';

/** A record as the inventory writes it (key = the monitor's name). */
function record(name: string): MonitorCertRecord {
  return {
    v: CERT_RECORD_VERSION,
    name,
    type: 'tcp',
    host: '127.0.0.1',
    lastSeenMs: Date.now(),
    certFirstSeenMs: Date.now(),
    writtenMs: Date.now(),
    fingerprint256: `AB:CD:${name}`,
    subject: 'localhost',
    validFromMs: Date.now() - 86_400_000,
    validToMs: Date.now() + 30 * 86_400_000,
  };
}

/** Creates the monitor `live` (never run: state off) and stores records of it and of the `orphans`. */
async function seed(h: MonitorHarness, orphans: string[]): Promise<void> {
  const made = await h.admin.request('POST', '/tcp/create', {
    body: { name: 'live', ip: '127.0.0.1', port: '1', tls: 'tls', sched: '60MIN', state: 'off' },
  });
  assert.equal(made.status, 201, made.text);
  const certs = h.svc.platform.store.bucket('certificates');
  for (const n of ['live', ...orphans]) await certs.put(n, record(n));
}

/** The keys of the `certificates` bucket, sorted. */
async function storedKeys(h: MonitorHarness): Promise<string[]> {
  const keys: string[] = [];
  for await (const { key } of h.svc.platform.store.bucket('certificates').range()) keys.push(String(key));
  return keys.sort();
}

const listedNames = async (h: MonitorHarness) =>
  ((await h.admin.request('GET', '/certificates')).body as Array<{ monitors: Array<{ name: string }> }>).flatMap((c) =>
    c.monitors.map((m) => m.name),
  );

describe('records of monitors that no longer exist are swept at start', () => {
  let h: MonitorHarness | undefined;
  after(async () => h?.stop());

  it('one instance: the orphan is deleted from the store, the record of the live monitor kept', async () => {
    h = await startMonitor();
    await seed(h, ['long-gone']);
    assert.deepEqual(await storedKeys(h), ['live', 'long-gone']);
    const dataDir = h.dataDir;
    await h.stop({ keepData: true });
    h = await startMonitor({ dataDir });
    assert.deepEqual(await storedKeys(h), ['live'], 'the orphan is gone from the store');
    assert.deepEqual(await listedNames(h), ['live']);
  });
});

describe('two instances on one PostgreSQL database sweeping at once', async () => {
  const made = await createTestDatabase('cert_sweep');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db = made;
  const env = { STORE_URL: db.url };
  const cluster = { heartbeatMs: 200, ttlMs: 2000 };
  const running: MonitorHarness[] = [];
  after(async () => {
    for (const r of running) await r.stop();
    await db.drop();
  });

  it('both start, every orphan is deleted, the record of the live monitor kept', async () => {
    const first = await startMonitor({ env, service: { cluster } });
    await seed(first, ['gone-1', 'gone-2', 'gone-3']);
    const dataDir = first.dataDir;
    const otherDir = sharedDataDir(dataDir);
    await first.stop({ keepData: true });
    running.push(
      ...(await Promise.all([
        startMonitor({ dataDir, env, service: { cluster } }),
        startMonitor({ dataDir: otherDir, env, service: { cluster } }),
      ])),
    );
    for (const r of running) {
      assert.deepEqual(await storedKeys(r), ['live']);
      assert.deepEqual(await listedNames(r), ['live']);
    }
  });
});
