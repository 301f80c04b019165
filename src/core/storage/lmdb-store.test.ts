import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { runKvStoreContract } from './kv-store.contract.js';
import { openLmdbStore, restoreLmdbBackup, type LmdbStore } from './lmdb-store.js';

const root = await mkdtemp(join(tmpdir(), 'lmdb-store-test-'));
let restores = 0;

runKvStoreContract(
  'lmdb',
  () => openLmdbStore({ path: join(root, 'main') }),
  () => rm(root, { recursive: true, force: true }),
  {
    restoreBackup: async (file) => {
      const dir = join(root, `restored-${restores++}`);
      await restoreLmdbBackup(file, dir);
      return openLmdbStore({ path: dir });
    },
  },
);

describe('LmdbStore specifics', () => {
  let dir: string;
  let store: LmdbStore;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lmdb-specific-'));
    store = await openLmdbStore({ path: join(dir, 'a') });
  });
  after(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('offers getSync on the bucket', async () => {
    const b = store.bucket('sync');
    await b.put(['x', 1], 'v');
    assert.equal(b.getSync(['x', 1]), 'v');
    assert.equal(b.getSync('missing'), undefined);
  });

  it('restoring over an existing store is refused', async () => {
    const file = join(dir, 'b.backup');
    await store.backup(file);
    await restoreLmdbBackup(file, join(dir, 'restored'));
    await assert.rejects(restoreLmdbBackup(file, join(dir, 'restored')), /already exists/);
  });

  it('lets two processes open different directories of one data dir at the same moment', async () => {
    const modUrl = pathToFileURL(join(import.meta.dirname, 'lmdb-store.ts')).href;
    const child = (sub: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const code =
          `const { openLmdbStore } = await import(${JSON.stringify(modUrl)});` +
          `const s = await openLmdbStore({ path: ${JSON.stringify(join(dir, sub))} });` +
          `await s.bucket('b').put('k', ${JSON.stringify(sub)});` +
          `process.stdout.write(String(await s.bucket('b').get('k'))); await s.close();`;
        const p = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        p.stdout.on('data', (d: Buffer) => (out += d.toString()));
        p.on('error', reject);
        p.on('exit', (rc) => (rc === 0 ? resolve(out) : reject(new Error(`child exited ${rc}`))));
      });
    assert.deepEqual(await Promise.all([child('monitor'), child('agent')]), ['monitor', 'agent']);
  });
});

describe('openStore', () => {
  it('opens the LMDB driver for driver=lmdb', async () => {
    const { openStore } = await import('./open-store.js');
    const dir = await mkdtemp(join(tmpdir(), 'open-store-'));
    const s = await openStore({ driver: 'lmdb', path: join(dir, 'db') });
    try {
      assert.equal(s.driver, 'lmdb');
      await s.bucket('b').put('k', 1);
      assert.equal(await s.bucket('b').get('k'), 1);
    } finally {
      await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
