/**
 * MonitorsRepo on both drivers: a definition loaded from the store keeps no decoded record alive and shares its short
 * values (decision 181). msgpackr decodes a record's strings as one string and hands out slices of it, which V8 keeps as
 * views on that string: before, every monitor in the map held its whole decoded record once more through its url and
 * other long fields, and its own copy of "1MIN", "on" and the like. Checked in a heap snapshot of this process.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import type { KvStore } from '../../core/storage/kv-store.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { openPostgresStore } from '../../core/storage/postgres-store.js';
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

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** Counts, in a snapshot of this process's heap, what the strings of the monitors loaded into `repo` are. */
async function census(repo: MonitorsRepo, dir: string): Promise<StringCensus> {
  assert.equal(repo.size, N);
  const file = writeHeapSnapshot(join(dir, `repo-${Date.now()}.heapsnapshot`));
  const snap = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  await rm(file);
  const { node_fields: nf, node_types: nt, edge_fields: ef, edge_types: et } = snap.snapshot.meta;
  const [iType, iName, iEdges] = [nf.indexOf('type'), nf.indexOf('name'), nf.indexOf('edge_count')];
  const [eType, eName, eTo] = [ef.indexOf('type'), ef.indexOf('name_or_index'), ef.indexOf('to_node')];
  const typeAt = (node: number) => nt[0][snap.nodes[node + iType]!];
  const out: StringCensus = { slicedUrls: 0, schedCopies: 0 };
  let edge = 0;
  for (let node = 0; node < snap.nodes.length; node += nf.length) {
    const type = typeAt(node);
    if (type === 'string' && snap.strings[snap.nodes[node + iName]!] === '5MIN') out.schedCopies++;
    for (const end = edge + snap.nodes[node + iEdges]! * ef.length; edge < end; edge += ef.length) {
      if (et[0][snap.edges[edge + eType]!] !== 'property' || snap.strings[snap.edges[edge + eName]!] !== 'url')
        continue;
      if (typeAt(snap.edges[edge + eTo]!) === 'sliced string') out.slicedUrls++;
    }
  }
  return out;
}

async function loadedCensus(store: KvStore, dir: string): Promise<StringCensus> {
  const writer = new MonitorsRepo(store);
  for (let i = 0; i < N; i++) await writer.put(monitor(i));
  const repo = new MonitorsRepo(store);
  await repo.load();
  assert.deepEqual(repo.get('checkout-7'), monitor(7));
  // The writer's monitors were made here, not decoded: drop them so that only the loaded ones are counted.
  for (let i = 0; i < N; i++) writer.get(`checkout-${i}`)!.config = {};
  return census(repo, dir);
}

function assertCompact(c: StringCensus): void {
  // Before decision 181: 300 sliced urls (each keeping its record's strings) and 302 copies of "5MIN"; after: 0 and 4.
  assert.equal(c.slicedUrls, 0, 'no loaded url is a view on its decoded record');
  assert.ok(c.schedCopies <= 8, `"5MIN" is one shared string, not one per monitor (${c.schedCopies} found)`);
}

describe('monitors loaded from the store keep no decoded record alive', () => {
  test('LMDB', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'monitors-repo-'));
    const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
    try {
      assertCompact(await loadedCensus(store, dir));
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

const db = await createTestDatabase('monitors_repo');
if ('unavailable' in db) reportUnavailable(db.unavailable);
else {
  after(() => db.drop());
  test('PostgreSQL', async () => {
    const store = await openPostgresStore({ url: db.url, namespace: 'repo' });
    const dir = await mkdtemp(join(tmpdir(), 'monitors-repo-'));
    try {
      assertCompact(await loadedCensus(store, dir));
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
}
