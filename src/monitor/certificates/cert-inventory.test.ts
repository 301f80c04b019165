/**
 * The certificate inventory's start-up sweep on a real LMDB store: records whose monitor is gone are forgotten in
 * memory and deleted from the store, a record of a monitor that exists is kept, records of another format are left
 * to the migrations, and two inventories sweeping the same store at once delete each orphan once, without error.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { openLmdbStore, type LmdbStore } from '../../core/storage/lmdb-store.js';
import { CERT_RECORD_VERSION, CertInventory, type MonitorCertRecord } from './cert-inventory.js';

const dirs: string[] = [];
const stores: LmdbStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function freshStore(): Promise<LmdbStore> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cert-inventory-'));
  dirs.push(dir);
  const store = await openLmdbStore({ path: dir, noSync: true });
  stores.push(store);
  return store;
}

function record(name: string, fingerprint256: string): MonitorCertRecord {
  return {
    v: CERT_RECORD_VERSION,
    name,
    type: 'url',
    host: 'example.test',
    lastSeenMs: 1_000,
    certFirstSeenMs: 1_000,
    writtenMs: 1_000,
    fingerprint256,
    validFromMs: 0,
    validToMs: Date.now() + 90 * 86_400_000,
  };
}

/** A store holding records of `live` and of the orphans, and a format-1 record (per fingerprint). */
async function seeded(live: string[], orphans: string[]): Promise<LmdbStore> {
  const store = await freshStore();
  const bucket = store.bucket('certificates');
  for (const n of [...live, ...orphans]) await bucket.put(n, record(n, `fp-${n}`));
  await bucket.put('AA:BB', { v: 1, fingerprint256: 'AA:BB', monitors: [] });
  return store;
}

const names = (inv: CertInventory) => inv.list(Date.now()).flatMap((c) => c.monitors.map((m) => m.name));
const gone = (live: string[]) => (name: string) => Promise.resolve(!live.includes(name));
const failOnError = (e: unknown) => assert.fail(String(e));

test('sweep forgets and deletes the records of monitors that are gone and keeps the others', async () => {
  const store = await seeded(['alive'], ['orphan-1', 'orphan-2']);
  const inv = new CertInventory(store, failOnError);
  await inv.load();
  assert.deepEqual(names(inv).sort(), ['alive', 'orphan-1', 'orphan-2']);

  assert.equal(await inv.sweep(gone(['alive'])), 2);
  assert.deepEqual(names(inv), ['alive']);
  const keys = [];
  for await (const { key } of store.bucket('certificates').range()) keys.push(String(key));
  assert.deepEqual(keys.sort(), ['AA:BB', 'alive'], 'a format-1 record is left to the migration');
  assert.equal(await inv.sweep(gone(['alive'])), 0, 'a second sweep finds nothing');
});

test('two inventories sweeping one store at once delete each orphan once', async () => {
  const orphans = ['o-1', 'o-2', 'o-3', 'o-4'];
  const store = await seeded(['alive'], orphans);
  const a = new CertInventory(store, failOnError);
  const b = new CertInventory(store, failOnError);
  await a.load();
  await b.load();
  const [sa, sb] = await Promise.all([a.sweep(gone(['alive'])), b.sweep(gone(['alive']))]);
  assert.equal(sa + sb, orphans.length);
  assert.deepEqual(names(a), ['alive']);
  assert.deepEqual(names(b), ['alive']);
  assert.equal(await store.bucket('certificates').count(), 2);
});

test('a record whose monitor the store holds (not yet followed into the map) is kept', async () => {
  // The map had not followed another instance's create yet: the store read in isGone says the monitor exists.
  const store = await seeded([], ['created-elsewhere']);
  const inv = new CertInventory(store, failOnError);
  await inv.load();
  assert.equal(await inv.sweep(() => Promise.resolve(false)), 0);
  assert.deepEqual(names(inv), ['created-elsewhere']);
  assert.ok(await store.bucket('certificates').get('created-elsewhere'));
});
