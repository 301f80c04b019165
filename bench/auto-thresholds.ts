/**
 * npm run bench:auto-thresholds — automatic thresholds in a cluster of three members on one PostgreSQL (decision 179).
 * AUTO_BENCH_MONITORS (default 10,000) url series, each with 8 days of hourly rollups (day blocks written directly,
 * as compaction leaves them) and a latest status, in a fresh database on PG_URL's server; three history services,
 * one store each, shards owned by rendezvous over three member ids. One hourly recompute of all three members, in
 * alternating rounds (AUTO_BENCH_ROUNDS, default 3, each way):
 * - every: the code before, each member computing every series (no `cluster` option: what a member did);
 * - shared: each member computes the series it holds, writes them per shard and reads every member's records.
 * Figures (medians over the rounds): this process's CPU for the three recomputes (and, shared, the reads the change
 * feed causes on the others), the slowest member's wall time, rollup reads per member, and the PostgreSQL backends'
 * CPU. Last line: one JSON object, units in the names.
 */
import pg from 'pg';
import { pino } from 'pino';
import { openPostgresStore, type PostgresStore } from '../src/core/storage/postgres-store.js';
import type { BatchOp } from '../src/core/storage/kv-store.js';
import { HOUR_MS } from '../src/core/time.js';
import { createHistoryService, type HistoryService } from '../src/monitor/history/history.service.js';
import { BUCKET, latestOp, putOp } from '../src/monitor/history/series.repo.js';
import { encodeDayBlock, encodeRollup, rollupOf } from '../src/monitor/history/rollup.js';
import { dayStart, type DbName } from '../src/monitor/history/types.js';
import { rendezvousOwner, SHARD_COUNT, shardOf } from '../src/monitor/cluster/shards.js';
import { createAutoThresholds, type AutoThresholds } from '../src/monitor/reporting/auto-threshold.js';
import { ThresholdShare } from '../src/monitor/reporting/auto-threshold-share.js';
import { BackendCpu } from './proc-stat.js';
import { createTestDatabase } from '../test/support/pg-database.fixture.js';

const N = Number(process.env.AUTO_BENCH_MONITORS ?? 10_000);
const ROUNDS = Number(process.env.AUTO_BENCH_ROUNDS ?? 3);
const SERVER = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MEMBERS = ['m1', 'm2', 'm3'].map((id) => ({ id, probe: '' }));
const log = pino({ level: 'silent' });
const settings = { get: (k: string) => ({ autoThreshold: 'true', autoThresholdRange: '168' })[k] };
const NOW = Date.now();
const names = Array.from({ length: N }, (_, i) => `auto-${i}`);
const ownerOf = (name: string): string => rendezvousOwner('*', shardOf(name), MEMBERS)!;
const heldBy = (id: string) =>
  Array.from({ length: SHARD_COUNT }, (_, shard) => ({ group: '*', shard })).filter(
    (s) => rendezvousOwner('*', s.shard, MEMBERS) === id,
  );

/** Day blocks of 24 hourly rollups (60 results each, 40–80 ms), four variants shared by the series. */
function dayBlocks(): Buffer[] {
  return [0, 1, 2, 3].map((v) => {
    const hours = new Map<number, Uint8Array>();
    for (let h = 0; h < 24; h++) {
      const rows = Array.from({ length: 60 }, (_, i) => ({
        ts: i,
        code: 0,
        resp: 40 + ((i * 7 + h + v) % 41),
        extra: false,
      }));
      hours.set(h, encodeRollup(rollupOf(rows)));
    }
    return encodeDayBlock(hours);
  });
}

async function fill(store: PostgresStore): Promise<void> {
  const blocks = dayBlocks();
  let ops: BatchOp[] = [];
  for (const [i, name] of names.entries()) {
    for (let d = 0; d < 8; d++)
      ops.push(putOp(BUCKET.day, 'url', name, dayStart(NOW) - d * 24 * HOUR_MS, blocks[(i + d) % 4]!));
    ops.push(latestOp('url', name, [NOW - 1000, 0, 50]));
    if (ops.length >= 2000) {
      await store.batch(ops);
      ops = [];
    }
  }
  if (ops.length) await store.batch(ops);
}

interface Member {
  id: string;
  store: PostgresStore;
  history: HistoryService;
  reads: number;
}

async function openMember(url: string, id: string): Promise<Member> {
  const store = await openPostgresStore({ url, namespace: 'auto' });
  const history = await createHistoryService({
    store,
    log,
    retentionHours: () => 24 * 365,
    flushIntervalMs: HOUR_MS,
    purgeIntervalMs: 0,
    followIntervalMs: HOUR_MS,
    holds: (_db, name) => ownerOf(name) === id,
  });
  const m: Member = { id, store, history, reads: 0 };
  const hourRollups = history.hourRollups.bind(history);
  history.hourRollups = (...args) => {
    m.reads++;
    return hourRollups(...args);
  };
  return m;
}

function autoOf(m: Member, shared: boolean): AutoThresholds {
  return createAutoThresholds({
    history: m.history,
    log,
    settings,
    intervalMs: 24 * HOUR_MS,
    cluster: shared
      ? {
          share: new ThresholdShare(m.store, m.id, log),
          heldShard: (_db: DbName, name: string) =>
            ownerOf(name) === m.id ? { group: '*', shard: shardOf(name) } : undefined,
          heldShards: () => heldBy(m.id),
        }
      : undefined,
  });
}

async function round(members: Member[], shared: boolean, admin: pg.Client, dbName: string) {
  const autos = members.map((m) => autoOf(m, shared));
  if (shared) for (const a of autos) a.start(); // follows the others' records (and computes once: awaited below)
  await Promise.all(autos.map((a) => a.recompute()));
  await new Promise((r) => setTimeout(r, 1000)); // the feed's reads of the start-up records settle
  for (const m of members) m.reads = 0;
  // Sampled every 250 ms: the pools replace backends within a recompute.
  const pgCpu = new BackendCpu(admin, dbName);
  const stopPgCpu = await pgCpu.every(250);
  const cpu0 = process.cpuUsage();
  const walls: number[] = [];
  for (const a of autos) {
    const t0 = performance.now();
    await a.recompute();
    walls.push(performance.now() - t0);
  }
  await new Promise((r) => setTimeout(r, 1000)); // the reads the last member's records cause on the others
  const cpu = process.cpuUsage(cpu0);
  await stopPgCpu();
  const pgMs = pgCpu.ms();
  const computed = autos.map((a) => names.filter((n) => a.get('url', n)).length);
  for (const a of autos) await a.stop();
  return {
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs: Math.max(...walls),
    readsPerMember: Math.max(...members.map((m) => m.reads)),
    pgMs,
    minKnown: Math.min(...computed),
  };
}

const made = await createTestDatabase('bench_auto');
if ('unavailable' in made) throw new Error(made.unavailable);
const url = new URL(made.url);
// PostgreSQL's CPU for this database, read from the server's statistics on a connection of its own.
const admin = new pg.Client({ connectionString: SERVER });
await admin.connect();
const out: Record<string, number> = { monitors: N, members: 3, rounds: ROUNDS };
try {
  const filler = await openPostgresStore({ url: url.toString(), namespace: 'auto' });
  await fill(filler);
  await filler.close();
  const members = await Promise.all(MEMBERS.map((m) => openMember(url.toString(), m.id)));
  const runs: Record<'every' | 'shared', Array<Awaited<ReturnType<typeof round>>>> = { every: [], shared: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const way of r % 2 ? (['shared', 'every'] as const) : (['every', 'shared'] as const)) {
      const res = await round(members, way === 'shared', admin, url.pathname.slice(1));
      if (res.minKnown !== N) throw new Error(`${way}: a member knows ${res.minKnown} of ${N} thresholds`);
      runs[way].push(res);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const way of ['every', 'shared'] as const) {
    out[`${way}_cpu_ms_per_recompute_of_3`] = Math.round(median(runs[way].map((x) => x.cpuMs)));
    out[`${way}_wall_ms_slowest_member`] = Math.round(median(runs[way].map((x) => x.wallMs)));
    out[`${way}_rollup_reads_per_member`] = median(runs[way].map((x) => x.readsPerMember));
    out[`${way}_pg_cpu_ms_per_recompute_of_3`] = Math.round(median(runs[way].map((x) => x.pgMs)));
  }
  out.cpu_ratio_shared_over_every = +(
    out.shared_cpu_ms_per_recompute_of_3! / out.every_cpu_ms_per_recompute_of_3!
  ).toFixed(3);
  out.pg_cpu_ratio_shared_over_every = +(
    out.shared_pg_cpu_ms_per_recompute_of_3! / out.every_pg_cpu_ms_per_recompute_of_3!
  ).toFixed(3);
  for (const m of members) {
    await m.history.close();
    await m.store.close();
  }
} finally {
  await admin.end();
  await made.drop();
}
console.log(
  `auto thresholds, 3 members × ${N} monitors: every member computing everything ${out.every_cpu_ms_per_recompute_of_3} ms CPU (PostgreSQL ${out.every_pg_cpu_ms_per_recompute_of_3} ms), shared ${out.shared_cpu_ms_per_recompute_of_3} ms (PostgreSQL ${out.shared_pg_cpu_ms_per_recompute_of_3} ms); rollup reads per member ${out.every_rollup_reads_per_member} → ${out.shared_rollup_reads_per_member}`,
);
console.log(JSON.stringify(out));
