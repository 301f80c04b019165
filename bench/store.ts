/**
 * KvStore driver throughput: LMDB (baseline) vs PostgreSQL, same workload, same run.
 * Run: npx tsx bench/store.ts   (PG_URL overrides postgres://postgres@127.0.0.1:5432/test; N=… scales the counts)
 * Last line: one JSON object of the figures.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KvStore } from '../src/core/storage/kv-store.js';
import { openLmdbStore } from '../src/core/storage/lmdb-store.js';
import { dropPostgresNamespace, openPostgresStore } from '../src/core/storage/postgres-store.js';

const N = Number(process.env.N ?? 5000);
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Figures {
  putParallelOpsPerS: number;
  batchPutOpsPerS: number;
  getOpsPerS: number;
  rangeEntriesPerS: number;
}

async function timed(ops: number, fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return Math.round(ops / s);
}

async function measure(store: KvStore): Promise<Figures> {
  const b = store.bucket('bench');
  const value = { status: 1, responseMs: 123, msg: 'ok' };
  const putParallelOpsPerS = await timed(N, async () => {
    for (let i = 0; i < N; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) => b.put(['p', i + j], value)));
    }
  });
  const rows = N * 10;
  const batchPutOpsPerS = await timed(rows, async () => {
    for (let i = 0; i < rows; i += 1000) {
      await store.batch(
        Array.from({ length: 1000 }, (_, j) => ({
          type: 'put' as const,
          bucket: 'bench',
          key: ['s', 1.7e12 + i + j],
          value,
        })),
      );
    }
  });
  const getOpsPerS = await timed(N, async () => {
    for (let i = 0; i < N; i++) await b.get(['p', (i * 7919) % N]);
  });
  let seen = 0;
  const rangeEntriesPerS = await timed(rows, async () => {
    for await (const _ of b.range({ start: ['s', 0], end: ['s', Infinity] })) seen++;
  });
  if (seen !== rows) throw new Error(`range saw ${seen} of ${rows}`);
  return { putParallelOpsPerS, batchPutOpsPerS, getOpsPerS, rangeEntriesPerS };
}

const dir = await mkdtemp(join(tmpdir(), 'bench-store-'));
const lmdb = await openLmdbStore({ path: join(dir, 'lmdb') });
const base = await measure(lmdb);
await lmdb.close();
await rm(dir, { recursive: true, force: true });
console.log('lmdb    ', base);

let pgFig: Figures | null = null;
const ns = `bench_${process.pid}`;
try {
  const pgStore = await openPostgresStore({ url: PG_URL, namespace: ns });
  try {
    pgFig = await measure(pgStore);
  } finally {
    await pgStore.close();
    await dropPostgresNamespace(PG_URL, ns);
  }
  console.log('postgres', pgFig);
} catch (err) {
  console.log(`postgres skipped: ${(err as Error).message}`);
}

const ratio = (k: keyof Figures): number | null => (pgFig ? Math.round((pgFig[k] / base[k]) * 1000) / 1000 : null);
console.log(
  JSON.stringify({
    n: N,
    lmdbPutParallelOpsPerS: base.putParallelOpsPerS,
    lmdbBatchPutOpsPerS: base.batchPutOpsPerS,
    lmdbGetOpsPerS: base.getOpsPerS,
    lmdbRangeEntriesPerS: base.rangeEntriesPerS,
    pgPutParallelOpsPerS: pgFig?.putParallelOpsPerS ?? null,
    pgBatchPutOpsPerS: pgFig?.batchPutOpsPerS ?? null,
    pgGetOpsPerS: pgFig?.getOpsPerS ?? null,
    pgRangeEntriesPerS: pgFig?.rangeEntriesPerS ?? null,
    pgToLmdbPutParallelRatio: ratio('putParallelOpsPerS'),
    pgToLmdbBatchPutRatio: ratio('batchPutOpsPerS'),
    pgToLmdbGetRatio: ratio('getOpsPerS'),
    pgToLmdbRangeRatio: ratio('rangeEntriesPerS'),
  }),
);
