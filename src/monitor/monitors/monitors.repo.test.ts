/**
 * MonitorsRepo on both drivers: a definition loaded from the store keeps no decoded record alive and shares its short
 * values (decision 181). msgpackr decodes a record's strings as one string and hands out slices of it, which V8 keeps as
 * views on that string: before, every monitor in the map held its whole decoded record once more through its url and
 * other long fields, and its own copy of "1MIN", "on" and the like. Checked in a heap snapshot of this process.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KvStore } from '../../core/storage/kv-store.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { openPostgresStore } from '../../core/storage/postgres-store.js';
import { takeHeapSnapshot } from '../../../test/support/heap-snapshot.kit.js';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import { MonitorsRepo, type StoredMonitor } from './monitors.repo.js';

const N = 300;
/** Short values every monitor has: with the pool, one string each, whatever N. */
const SCHED = 'EVERY_5MIN';

function monitor(i: number): StoredMonitor {
  const config: Record<string, string> = {
    display_name: `Checkout service ${i} (production)`,
    url: `https://checkout-${i}.shop.example.com/health/ready?deep=true`,
    sched: SCHED.slice(6),
    state: 'on',
    probe: 'default',
    timeout: '10',
  };
  return { name: `checkout-${i}`, type: 'url', config, createdMs: 1e12 + i, updatedMs: 1e12 + i };
}

interface StringCensus {
  /** Properties `url` whose string is a slice (a view on a parent string). */
  slicedUrls: number;
  /** Distinct string objects "5MIN" in the heap. */
  schedCopies: number;
}

async function loadedCensus(store: KvStore): Promise<StringCensus> {
  const writer = new MonitorsRepo(store);
  for (let i = 0; i < N; i++) await writer.put(monitor(i));
  const repo = new MonitorsRepo(store);
  await repo.load();
  assert.deepEqual(repo.get('checkout-7'), monitor(7));
  // The writer's monitors were made here, not decoded: drop them so that only the loaded ones are counted.
  for (let i = 0; i < N; i++) writer.get(`checkout-${i}`)!.config = {};
  assert.equal(repo.size, N);
  const heap = await takeHeapSnapshot();
  return { slicedUrls: heap.slicedProperties('url'), schedCopies: heap.stringsMatching(/^5MIN$/).length };
}

function assertCompact(c: StringCensus): void {
  // Before decision 181: 300 sliced urls (each keeping its record's strings) and 302 copies of "5MIN"; after: 0 and 4.
  assert.equal(c.slicedUrls, 0, 'no loaded url is a view on its decoded record');
  assert.ok(c.schedCopies <= 8, `"5MIN" is one shared string, not one per monitor (${c.schedCopies} found)`);
}

// Before any test is registered: with --test-force-exit the file's process exits once its registered tests have
// ended, so a test registered after this await could silently never run (test/meta/test-registration.test.ts).
const db = await createTestDatabase('monitors_repo');

describe('monitors loaded from the store keep no decoded record alive', () => {
  test('LMDB', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'monitors-repo-'));
    const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
    try {
      assertCompact(await loadedCensus(store));
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  test('PostgreSQL', async () => {
    const store = await openPostgresStore({ url: db.url, namespace: 'repo' });
    try {
      assertCompact(await loadedCensus(store));
    } finally {
      await store.close();
    }
  });
}
