import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { eventually, runKvStoreContract } from './kv-store.contract.js';
import type { KvKey } from './kv-store.js';
import { openLmdbStore } from './lmdb-store.js';
import { dropPostgresNamespace, openPostgresStore, restorePostgresBackup } from './postgres-store.js';

const url = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const runId = `t${Date.now().toString(36)}_${process.pid}`;
const namespaces: string[] = [];
const ns = (suffix: string): string => {
  const name = `${runId}_${suffix}`.slice(0, 32);
  namespaces.push(name);
  return name;
};

async function probe(): Promise<string | undefined> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return undefined;
  } catch (err) {
    return `PostgreSQL not reachable at ${url}: ${(err as Error).message}`;
  } finally {
    await c.end().catch(() => undefined);
  }
}

const unavailable = await probe();

async function dropAll(): Promise<void> {
  for (const n of namespaces) await dropPostgresNamespace(url, n);
}

if (unavailable && process.env.CI === 'true') {
  it('PostgreSQL is reachable (required with CI=true)', () => assert.fail(unavailable));
} else if (unavailable) {
  it('postgres store', { skip: unavailable }, () => undefined);
} else {
  const main = ns('main');
  let restores = 0;
  runKvStoreContract('postgres', () => openPostgresStore({ url, namespace: main, pageSize: 200 }), dropAll, {
    openPeer: () => openPostgresStore({ url, namespace: main }),
    restoreBackup: async (file) => {
      const target = await openPostgresStore({ url, namespace: ns(`r${restores++}`) });
      await restorePostgresBackup(file, target);
      return target;
    },
  });

  describe('PostgresStore specifics', () => {
    const dir = mkdtemp(join(tmpdir(), 'pg-store-test-'));
    after(async () => {
      await rm(await dir, { recursive: true, force: true });
      await dropAll();
    });

    it('after a lost feed connection, reconnects and tells every watcher to reload', async () => {
      const name = ns('feed');
      const [a, b] = await Promise.all([
        openPostgresStore({ url, namespace: name }),
        openPostgresStore({ url, namespace: name }),
      ]);
      try {
        const seen: Array<KvKey | undefined> = [];
        a.watch('w', (k) => void seen.push(k));
        b.watch('w', () => undefined);
        a.feed.breakConnection();
        await eventually(() => seen.length === 1, 'a reload after the reconnect');
        assert.deepEqual(seen, [undefined]);
        await b.bucket('w').put('k', 1);
        await eventually(() => seen.length === 2, 'a change after the reconnect');
        assert.deepEqual(seen, [undefined, 'k']);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('validates the namespace', async () => {
      for (const bad of ['', 'Upper', 'has-dash', 'x'.repeat(33), 'a;drop']) {
        await assert.rejects(openPostgresStore({ url, namespace: bad }), /invalid namespace/);
      }
    });

    it('creates its tables safely when two stores open the same new namespace at once', async () => {
      const name = ns('race');
      const [a, b] = await Promise.all([
        openPostgresStore({ url, namespace: name }),
        openPostgresStore({ url, namespace: name }),
      ]);
      await a.bucket('x').put(1, 'a');
      assert.equal(await b.bucket('x').get(1), 'a');
      await Promise.all([a.close(), b.close()]);
    });

    it('restores a postgres backup into an LMDB store, and rejects a truncated file', async () => {
      const src = await openPostgresStore({ url, namespace: ns('tolmdb') });
      try {
        await src.batch([
          { type: 'put', bucket: 'series', key: ['cpu', 1700000000000], value: { v: 1 } },
          { type: 'put', bucket: 'series', key: ['cpu', 1700000060000], value: Buffer.from([7]) },
        ]);
        src.bucket('empty');
        const file = join(await dir, 'pg.backup');
        await src.backup(file);
        const lmdb = await openLmdbStore({ path: join(await dir, 'lmdb') });
        try {
          assert.equal(await restorePostgresBackup(file, lmdb), 2);
          assert.deepEqual(await lmdb.bucket('series').get(['cpu', 1700000000000]), { v: 1 });
          const names = (await lmdb.buckets()).map((b) => b.name);
          assert.deepEqual(names.sort(), ['empty', 'series']);
        } finally {
          await lmdb.close();
        }
        await truncate(file, (await stat(file)).size - 3);
        const other = await openLmdbStore({ path: join(await dir, 'lmdb2') });
        await assert.rejects(restorePostgresBackup(file, other), /truncated/);
        await other.close();
      } finally {
        await src.close();
      }
    });
  });
}

if (!unavailable) {
  it('openStore opens the PostgreSQL driver for driver=postgres', async () => {
    const { openStore } = await import('./open-store.js');
    const name = ns('open');
    const s = await openStore({ driver: 'postgres', url, namespace: name });
    try {
      assert.equal(s.driver, 'postgres');
      await s.bucket('b').put('k', 1);
      assert.equal(await s.bucket('b').get('k'), 1);
    } finally {
      await s.close();
      await dropPostgresNamespace(url, name);
    }
  });
}

it('maps a lost PostgreSQL connection to AppError UNAVAILABLE', async (t) => {
  if (unavailable) return t.skip(unavailable);
  const { isAppError } = await import('../errors.js');
  const name = ns('down');
  const s = await openPostgresStore({ url, namespace: name });
  await s.close();
  await assert.rejects(s.bucket('b').get('k'), (e: unknown) => isAppError(e) && e.code === 'UNAVAILABLE');
  await dropPostgresNamespace(url, name);
});
