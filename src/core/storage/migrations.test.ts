/**
 * The migration runner: ordered, recorded, idempotent across restarts, a backup before migrating a store with data,
 * a partial failure resumes where it stopped, a store from a newer build is refused with nothing written.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { openLmdbStore } from './lmdb-store.js';
import { migrateStore, readFormat, StoreTooNewError, type Migration } from './migrations.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'migrations-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const log = pino({ level: 'silent' });
let n = 0;

function fresh() {
  const dataDir = path.join(root, `d${n++}`);
  return { dataDir, open: () => openLmdbStore({ path: path.join(dataDir, 'store') }) };
}

/** Migrations that append their id to a `trace` list in the store, so order and repeats show. */
function traced(ids: string[], fail?: string): Migration[] {
  return ids.map((id) => ({
    id,
    description: `step ${id}`,
    async up({ store }) {
      if (id === fail) throw new Error(`boom in ${id}`);
      const b = store.bucket('trace');
      const seen = (await b.get<string[]>('ran')) ?? [];
      await b.put('ran', [...seen, id]);
    },
  }));
}

const opts = (dataDir: string, migrations: Migration[]) => ({ migrations, dataDir, service: 'test', log });

test('a new store runs every migration in order, records them, and takes no backup', async () => {
  const { dataDir, open } = fresh();
  const store = await open();
  const r = await migrateStore(store, { ...opts(dataDir, traced(['a', 'b', 'c'])), formats: { x: 1 } });
  assert.deepEqual(r.ran, ['a', 'b', 'c']);
  assert.equal(r.version, 3);
  assert.equal(r.backupFile, undefined);
  assert.deepEqual(await store.bucket('trace').get('ran'), ['a', 'b', 'c']);
  const f = await readFormat(store);
  assert.deepEqual(
    f?.applied.map((a) => a.id),
    ['a', 'b', 'c'],
  );
  assert.deepEqual(f?.formats, { x: 1 });
  await store.close();
});

test('a restart runs nothing again; a migration appended later runs alone, after a backup of the data', async () => {
  const { dataDir, open } = fresh();
  let store = await open();
  await migrateStore(store, opts(dataDir, traced(['a', 'b'])));
  await store.close();
  store = await open();
  assert.deepEqual((await migrateStore(store, opts(dataDir, traced(['a', 'b'])))).ran, []);
  const r = await migrateStore(store, opts(dataDir, traced(['a', 'b', 'c'])));
  assert.deepEqual(r.ran, ['c']);
  assert.equal(r.version, 3);
  assert.ok(r.backupFile && fs.statSync(r.backupFile).size > 0, 'backed up before migrating');
  assert.match(path.basename(r.backupFile), /^test-pre-migration-.*\.mdb$/);
  assert.deepEqual(await store.bucket('trace').get('ran'), ['a', 'b', 'c']);
  await store.close();
});

test('a failing migration stops the start; the next start resumes at it, the earlier ones are not repeated', async () => {
  const { dataDir, open } = fresh();
  const store = await open();
  await assert.rejects(migrateStore(store, opts(dataDir, traced(['a', 'b', 'c'], 'b'))), /boom in b/);
  assert.deepEqual(
    (await readFormat(store))?.applied.map((a) => a.id),
    ['a'],
  );
  const r = await migrateStore(store, opts(dataDir, traced(['a', 'b', 'c'])));
  assert.deepEqual(r.ran, ['b', 'c']);
  assert.deepEqual(await store.bucket('trace').get('ran'), ['a', 'b', 'c']);
  await store.close();
});

test('a store written by a newer build (unknown migration or newer format) is refused and left untouched', async () => {
  const { dataDir, open } = fresh();
  const store = await open();
  await migrateStore(store, { ...opts(dataDir, traced(['a', 'future'])), formats: { x: 2 } });
  const before = await readFormat(store);
  await assert.rejects(
    migrateStore(store, { ...opts(dataDir, traced(['a', 'b'])), formats: { x: 2 } }),
    (e: unknown) => e instanceof StoreTooNewError && /newer version/.test(e.message) && /future/.test(e.message),
  );
  await assert.rejects(
    migrateStore(store, { ...opts(dataDir, traced(['a', 'future'])), formats: { x: 1 } }),
    (e: unknown) => e instanceof StoreTooNewError && /x format 2/.test(e.message),
  );
  assert.deepEqual(await readFormat(store), before, 'the record is unchanged');
  assert.deepEqual(await store.bucket('trace').get('ran'), ['a', 'future'], 'no migration ran');
  assert.equal(fs.existsSync(path.join(dataDir, 'backups')), false, 'no backup written either');
  await store.close();
});

test('a registry with a duplicate id is a programming error', async () => {
  const { dataDir, open } = fresh();
  const store = await open();
  await assert.rejects(migrateStore(store, opts(dataDir, traced(['a', 'a']))), /registered twice: a/);
  await store.close();
});
