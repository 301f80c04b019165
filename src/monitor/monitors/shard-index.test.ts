/**
 * The monitors-by-lease-key index (shard-index.ts) and its upkeep by the monitors repo (monitors.repo.ts): placement
 * by probe group and shard, enabled counts through state changes and moves between groups, deletes, a reload, and
 * another instance's change arriving through the store's change feed (two stores on one PostgreSQL database).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openPostgresStore } from '../../core/storage/postgres-store.js';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import { shardOf } from '../cluster/shards.js';
import { MonitorsRepo, type StoredMonitor } from './monitors.repo.js';
import { ShardIndex } from './shard-index.js';

const counts = (idx: ShardIndex) =>
  Object.fromEntries([...idx.entries()].map((e) => [`${e.group}/${e.shard}`, [e.names.size, e.enabled]]));

// Before any test is registered: with --test-force-exit the file's process exits once its registered tests have
// ended, so a test registered after this await could silently never run (test/meta/test-registration.test.ts).
const db = await createTestDatabase('shard_index');

test('places monitors by probe group and shard and keeps the enabled counts through changes', () => {
  const idx = new ShardIndex();
  idx.set('a', undefined, true);
  idx.set('b', 'default', false);
  idx.set('c', 'eu-1', true);
  const [sa, sb, sc] = ['a', 'b', 'c'].map(shardOf);
  const expected: Record<string, [number, number]> = {};
  const add = (k: string, n: number, on: number) => {
    const [n0, on0] = expected[k] ?? [0, 0];
    expected[k] = [n0 + n, on0 + on];
  };
  add(`*/${sa}`, 1, 1);
  add(`*/${sb}`, 1, 0);
  add(`eu-1/${sc}`, 1, 1);
  assert.deepEqual(counts(idx), expected, "'', 'default' and '*' are the any-group");
  assert.deepEqual(idx.names('*', sa!).includes('a'), true);

  idx.set('b', '*', true); // enabled, same group: counted, not moved
  idx.set('a', 'us-1', true); // moved to another group
  idx.set('a', 'us-1', true); // no change: not counted twice
  idx.delete('c');
  idx.delete('never-there');
  const after: Record<string, [number, number]> = {};
  const put = (k: string, n: number, on: number) => {
    const [n0, on0] = after[k] ?? [0, 0];
    after[k] = [n0 + n, on0 + on];
  };
  put(`*/${sb}`, 1, 1);
  put(`us-1/${sa}`, 1, 1);
  assert.deepEqual(counts(idx), after, 'emptied keys leave the index');

  const copy = idx.names('*', sb!);
  idx.set('b', 'eu-2', false);
  assert.deepEqual(copy, ['b'], 'names() is a copy: re-syncing while iterating it is safe');
  idx.clear();
  assert.deepEqual(counts(idx), {});
});

if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  test('the monitors repo keeps its index with puts, deletes, reloads and changes from another instance', async () => {
    // Two instances on one PostgreSQL database: `there`'s writes reach `here` through the change feed.
    const [a, b] = await Promise.all([1, 2].map(() => openPostgresStore({ url: db.url, namespace: 'monitor' })));
    const mon = (name: string, state = 'on'): StoredMonitor => ({
      name,
      type: 'tcp',
      config: { sched: '1MIN', state, probe: 'default' },
      createdMs: 1,
      updatedMs: Date.now(),
    });
    try {
      const here = new MonitorsRepo(a!);
      const there = new MonitorsRepo(b!);
      const followed: string[] = [];
      here.follow((name) => void followed.push(name));
      there.follow(() => undefined); // a store announces writes to the buckets it watches, as every instance does
      await here.put(mon('x'));
      await here.load();
      const idx = here.shardIndex(); // made from the map as it is, kept from now on
      assert.deepEqual(idx.names('*', shardOf('x')), ['x']);
      await here.put(mon('y', 'off'));
      assert.ok(idx.names('*', shardOf('y')).includes('y'));
      await here.delete('x');
      assert.ok(!idx.names('*', shardOf('x')).includes('x'));
      await there.put(mon('z'));
      for (let i = 0; i < 500 && !followed.includes('z'); i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(idx.names('*', shardOf('z')).includes('z'), "another instance's monitor is indexed when it arrives");
      await here.load();
      const all = [...idx.entries()].flatMap((e) => [...e.names]).sort();
      assert.deepEqual(all, ['y', 'z'], 'a reload rebuilds the index from the store');
      const enabled = [...idx.entries()].reduce((n, e) => n + e.enabled, 0);
      assert.equal(enabled, 1, 'y is off, z is on');
    } finally {
      await Promise.all([a!.close(), b!.close()]);
    }
  });
}
