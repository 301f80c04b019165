/**
 * Scheduled backups and restore: rotation keeps the newest N of a service's own backups (never pre-migration ones or
 * another service's); the round trip backup → restore → same data for LMDB and PostgreSQL stores; restore refuses
 * an existing store without --force, and the restore command refuses while the service answers on its port.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pg from 'pg';
import pino from 'pino';
import type { KvStore } from './kv-store.js';
import { openStore, type StoreConfig } from './open-store.js';
import { pruneBackups, restoreStore, startBackupSchedule } from './backups.js';
import { dropPostgresNamespace } from './postgres-store.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'backups-test-'));
const log = pino({ level: 'silent' });
const pgUrl = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const namespaces: string[] = [];
after(async () => {
  for (const n of namespaces) await dropPostgresNamespace(pgUrl, n).catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

async function fill(store: KvStore): Promise<void> {
  await store.bucket('users').put('alice', { group: 'admin', n: 1 });
  await store.batch(
    Array.from({ length: 50 }, (_, i) => ({ type: 'put' as const, bucket: 'hist.raw', key: ['m', i], value: i * 2 })),
  );
}

async function dump(store: KvStore): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const b of await store.buckets()) {
    out[b.name] = [];
    for await (const e of store.bucket(b.name).range()) out[b.name]!.push([e.key, e.value]);
  }
  return out;
}

test('rotation keeps the newest N of the service own backups, never pre-migration or other services files', async () => {
  const dir = path.join(root, 'rot');
  const store = await openStore({ driver: 'lmdb', path: path.join(root, 'rot-store') });
  await fill(store);
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['monitor-pre-migration-x.mdb', 'agent-2026.mdb', 'notes.txt'])
    fs.writeFileSync(path.join(dir, f), 'x');
  let t = Date.parse('2026-01-01T00:00:00Z');
  const owns = (f: string) => f.startsWith('monitor-');
  const s = startBackupSchedule({ store, service: 'monitor', dir, intervalMs: 0, keep: 2, owns, log, now: () => t });
  const files: string[] = [];
  for (let i = 0; i < 3; i++) {
    files.push(path.basename(await s.runOnce()));
    t += 3_600_000;
  }
  s.stop();
  const left = fs.readdirSync(dir).sort();
  assert.deepEqual(left, ['agent-2026.mdb', 'monitor-pre-migration-x.mdb', files[1], files[2], 'notes.txt'].sort());
  assert.deepEqual(await pruneBackups(dir, owns, 1), [files[1]]);
  await store.close();
});

async function roundTrip(source: StoreConfig, target: StoreConfig, label: string) {
  const store = await openStore(source);
  await fill(store);
  const s = startBackupSchedule({
    store,
    service: 'monitor',
    dir: path.join(root, `bk-${label}`),
    intervalMs: 0,
    keep: 5,
    owns: (f) => f.startsWith('monitor-'),
    log,
  });
  const file = await s.runOnce();
  const expected = await dump(store);
  await store.close();
  await restoreStore(file, target, false);
  const restored = await openStore(target);
  assert.deepEqual(await dump(restored), expected, `${label}: the restored store holds the same data`);
  await restored.bucket('users').put('later', 1);
  await restored.close();
  await assert.rejects(restoreStore(file, target, false), /--force/, 'an existing store is not overwritten');
  const r = await restoreStore(file, target, true);
  const again = await openStore(target);
  assert.equal(await again.bucket('users').get('later'), undefined, 'with --force the backup replaces the store');
  await again.close();
  return r;
}

test('LMDB: backup → restore round trip; --force moves the old store aside', async () => {
  const target = path.join(root, 'lmdb-restored');
  const r = await roundTrip(
    { driver: 'lmdb', path: path.join(root, 'lmdb-src') },
    { driver: 'lmdb', path: target },
    'lmdb',
  );
  assert.ok(r.movedAside && fs.existsSync(path.join(r.movedAside, 'data.mdb')), 'the replaced store is kept aside');
});

async function pgUnavailable(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 5000 });
  try {
    await c.connect();
    return undefined;
  } catch (e) {
    return `PostgreSQL not reachable at ${pgUrl}: ${(e as Error).message}`;
  } finally {
    await c.end().catch(() => undefined);
  }
}

test('PostgreSQL: backup (.kvdump) → restore round trip into a namespace', async (t) => {
  const why = await pgUnavailable();
  if (why && process.env.CI === 'true') assert.fail(why);
  if (why) return t.skip(why);
  const id = `bk${Date.now().toString(36)}${process.pid}`;
  namespaces.push(`${id}_s`, `${id}_r`);
  await roundTrip(
    { driver: 'postgres', url: pgUrl, namespace: `${id}_s` },
    { driver: 'postgres', url: pgUrl, namespace: `${id}_r` },
    'postgres',
  );
});

test('npm run restore refuses while the service answers on its port', async () => {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const file = path.join(root, 'bk-lmdb');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/restore.ts', path.join(file, 'x.mdb')], {
    env: { ...process.env, DATA_DIR: path.join(root, 'cli'), MONITOR_PORT: String(port) },
    encoding: 'utf8',
  });
  server.close();
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /answers on port \d+: stop it before restoring/);
});
