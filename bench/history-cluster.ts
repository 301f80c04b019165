/**
 * npm run bench:history-cluster — the history engine on PostgreSQL (docs/cluster.md "History"), in a fresh database
 * on PG_URL's server:
 * 1. Layout: HIST_BENCH_MONITORS (default 1,000) url-like monitors × 1 result/minute × HIST_BENCH_HOURS (default 6)
 *    through the real write path (append, a flush every 10 s of simulated time, hourly compaction), then the bytes per
 *    result that stay (hist.raw, hist.day, extras, transitions, latest): key+value bytes (as bench:history counts
 *    LMDB) and PostgreSQL's own size of those rows (pg_column_size, tuple headers) plus their share of the index;
 *    the same data written into LMDB in the same run is the baseline.
 * 2. Following: 10,000 monitors' results of one minute written by instance A (30 flushes, as at 1MIN) and followed by
 *    instance B through the change feed: B's CPU per followed result, and NOTIFYs per 1,000 results.
 * 3. Fencing (docs/cluster.md "History"): the writer's CPU and wall time per result for the same minute of 10,000
 *    monitors in 30 flushes, each result under its shard lease's fence (85 shards held: one member of three) and
 *    without fences (the code before fencing), in alternating rounds; medians.
 * Last line: one JSON object, units in the names.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { openPostgresStore } from '../src/core/storage/postgres-store.js';
import { openLmdbStore } from '../src/core/storage/lmdb-store.js';
import type { KvStore } from '../src/core/storage/kv-store.js';
import { createHistoryService, type HistoryServiceOptions } from '../src/monitor/history/history.service.js';
import { BUCKET } from '../src/monitor/history/series.repo.js';
import type { ResultRecord } from '../src/monitor/history/types.js';
import { HOUR_MS } from '../src/core/time.js';
import { encodeKey } from '../src/core/storage/key-codec.js';
import { pack } from 'msgpackr';
import { createTestDatabase } from '../test/support/pg-database.fixture.js';

const MONITORS = Number(process.env.HIST_BENCH_MONITORS ?? 1000);
const HOURS = Number(process.env.HIST_BENCH_HOURS ?? 6);
const FOLLOW_MONITORS = 10_000;
const MIN = 60_000;
const T0 = Date.UTC(2026, 5, 1);
const log = pino({ level: 'silent' });
const out: Record<string, number> = { monitors: MONITORS, hours: HOURS };

function result(i: number, ts: number): ResultRecord {
  const down = (i * 7 + Math.floor(ts / MIN)) % 97 === 0;
  return down
    ? { ts, status: 'DOWN', responseTimeMs: 0, message: 'connection refused' }
    : { ts, status: 'OK', responseTimeMs: 20 + ((i * 31 + ts / MIN) % 50), metrics: { ttfbMs: 12.5 + (i % 9) } };
}

function options(store: KvStore, clock: { now: number }, cluster: boolean): HistoryServiceOptions {
  return {
    store,
    log,
    clock: () => clock.now,
    retentionHours: () => 24 * 365,
    flushIntervalMs: HOUR_MS,
    purgeIntervalMs: 0,
    followIntervalMs: HOUR_MS,
    ...(cluster ? { holds: () => true } : {}),
    // As the service does: every result records its origin (history/origins.ts; ignored by builds before it).
    origin: { probe: 'default', location: '', instance: os.hostname() },
  };
}

/** Writes MONITORS × HOURS × 60 results and closes every hour; returns the result count. */
async function fill(store: KvStore, cluster: boolean): Promise<number> {
  const clock = { now: T0 };
  const h = await createHistoryService(options(store, clock, cluster));
  let n = 0;
  for (let t = T0; t < T0 + HOURS * HOUR_MS; t += 10_000) {
    for (let i = 0; i < MONITORS; i++) {
      const ts = Math.floor(t / MIN) * MIN + ((i * 997) % MIN);
      if (ts < t || ts >= t + 10_000) continue;
      h.append('url', `m${i}`, result(i, ts));
      n++;
    }
    clock.now = t + 10_000;
    await h.flush();
  }
  clock.now = T0 + (HOURS + 2) * HOUR_MS + 20_000; // past every hour's compaction and the WAL's keep
  for (let i = 0; i < 4; i++) await h.flush();
  await h.close();
  return n;
}

async function pgLayout(url: string): Promise<void> {
  const store = await openPostgresStore({ url, namespace: 'layout' });
  const results = await fill(store, true);
  await store.close();
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('VACUUM FULL kv_layout');
  const hist = Object.values(BUCKET);
  const r = await c.query(
    `SELECT sum(octet_length(k) + octet_length(v))::bigint AS kv, sum(pg_column_size(t.*) + 4)::bigint AS tuples,
            count(*)::int AS n FROM kv_layout t WHERE bucket = ANY($1)`,
    [hist],
  );
  const all = await c.query(`SELECT count(*)::int AS n FROM kv_layout`);
  const index = await c.query(`SELECT pg_relation_size('kv_layout_pkey')::bigint AS b`);
  const wal = await c.query(`SELECT count(*)::int AS n FROM kv_layout WHERE bucket = 'hist.wal'`);
  await c.end();
  const rows = r.rows[0] as { kv: string; tuples: string; n: number };
  const indexShare = (Number((index.rows[0] as { b: string }).b) * rows.n) / (all.rows[0] as { n: number }).n;
  out.results = results;
  out.pg_kv_bytes_per_result = +(Number(rows.kv) / results).toFixed(2);
  out.pg_rows_bytes_per_result = +(Number(rows.tuples) / results).toFixed(2);
  out.pg_rows_and_index_bytes_per_result = +((Number(rows.tuples) + indexShare) / results).toFixed(2);
  out.pg_history_rows_per_monitor_hour = +(rows.n / (MONITORS * HOURS)).toFixed(2);
  out.pg_wal_records_left = (wal.rows[0] as { n: number }).n;
}

async function lmdbLayout(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hist-cluster-bench-'));
  try {
    const store = await openLmdbStore({ path: path.join(dir, 'db'), noSync: true });
    const results = await fill(store, false);
    let bytes = 0; // key + value bytes, counted as the PostgreSQL figure is
    for (const name of Object.values(BUCKET)) {
      for await (const e of store.bucket(name).range()) {
        const v = e.value instanceof Uint8Array ? e.value.length : pack(e.value).length;
        bytes += encodeKey(e.key).length + v;
      }
    }
    await store.close();
    out.lmdb_kv_bytes_per_result = +(bytes / results).toFixed(2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A writes one minute of 10,000 monitors' results in 30 flushes; B follows through the feed. */
async function follow(url: string): Promise<void> {
  const clock = { now: T0 + 5 * MIN };
  const sa = await openPostgresStore({ url, namespace: 'follow' });
  const sb = await openPostgresStore({ url, namespace: 'follow' });
  const a = await createHistoryService({ ...options(sa, clock, true), holds: () => true });
  let seen = 0;
  const b = await createHistoryService({
    ...options(sb, clock, true),
    holds: () => false,
    onRemoteLatest: () => seen++,
  });
  let cpuUs = 0;
  let n = 0;
  const perFlush = FOLLOW_MONITORS / 30;
  for (let f = 0; f < 30; f++) {
    for (let i = f * perFlush; i < (f + 1) * perFlush; i++) a.append('url', `m${i}`, result(i, clock.now + i));
    n += perFlush;
    await a.flush();
    const c0 = process.cpuUsage();
    const deadline = Date.now() + 30_000;
    while (seen < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    const c = process.cpuUsage(c0);
    cpuUs += c.user + c.system;
    if (seen < n) throw new Error(`B followed ${seen} of ${n} results`);
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const wal = await c.query(
    `SELECT sum(pg_column_size(t.*) + 4)::bigint AS b FROM kv_follow t WHERE bucket = 'hist.wal'`,
  );
  await c.end();
  out.wal_rows_bytes_per_result = +(Number((wal.rows[0] as { b: string }).b) / n).toFixed(2);
  out.follow_monitors = FOLLOW_MONITORS;
  out.follow_cpu_us_per_result = +(cpuUs / n).toFixed(2);
  out.follow_notify_per_1000_results = +((30 / n) * 1000).toFixed(2);
  await a.close();
  await b.close();
  await sa.close();
  await sb.close();
}

/** One round of the writer: 10,000 monitors' minute in 30 flushes; CPU and wall µs spent in append + flush. */
async function writeRound(url: string, namespace: string, fenced: boolean): Promise<{ cpuUs: number; wallUs: number }> {
  const clock = { now: T0 + 5 * MIN };
  const store = await openPostgresStore({ url, namespace });
  const fences = Array.from({ length: 85 }, (_, k) => ({ key: `shard:*:${k}`, epoch: 1 }));
  const fenceOf = (i: number) => (fenced ? fences[i % fences.length] : undefined);
  const h = await createHistoryService({
    ...options(store, clock, true),
    ...(fenced ? { fenceOf: (_db: string, name: string) => fences[Number(name.slice(1)) % fences.length] } : {}),
  });
  const perFlush = FOLLOW_MONITORS / 30;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let f = 0; f < 30; f++) {
    for (let i = f * perFlush; i < (f + 1) * perFlush; i++)
      h.append('url', `m${i}`, result(i, clock.now + i), fenceOf(i));
    await h.flush();
  }
  const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
  const c = process.cpuUsage(c0);
  await h.close();
  await store.close();
  return { cpuUs: (c.user + c.system) / FOLLOW_MONITORS, wallUs: wallUs / FOLLOW_MONITORS };
}

async function fencing(url: string): Promise<void> {
  const rounds: Record<'plain' | 'fenced', Array<{ cpuUs: number; wallUs: number }>> = { plain: [], fenced: [] };
  for (let r = 0; r < 5; r++) {
    rounds.plain.push(await writeRound(url, `wp${r}`, false));
    rounds.fenced.push(await writeRound(url, `wf${r}`, true));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const k of ['plain', 'fenced'] as const) {
    out[`write_${k}_cpu_us_per_result`] = +median(rounds[k].map((x) => x.cpuUs)).toFixed(2);
    out[`write_${k}_wall_us_per_result`] = +median(rounds[k].map((x) => x.wallUs)).toFixed(2);
  }
}

const made = await createTestDatabase('bench_hist');
if ('unavailable' in made) throw new Error(made.unavailable);
try {
  await lmdbLayout();
  await pgLayout(made.url);
  await follow(made.url);
  await fencing(made.url);
} finally {
  await made.drop();
}
console.log(
  `history on PostgreSQL: ${out.pg_rows_and_index_bytes_per_result} B/result (rows + index; key+value ${out.pg_kv_bytes_per_result}; LMDB key+value ${out.lmdb_kv_bytes_per_result}); open-hour WAL ${out.wal_rows_bytes_per_result} B/result; following: ${out.follow_cpu_us_per_result} µs CPU/result, ${out.follow_notify_per_1000_results} NOTIFY per 1,000 results; writing: ${out.write_plain_cpu_us_per_result} µs CPU/result unfenced, ${out.write_fenced_cpu_us_per_result} fenced (wall ${out.write_plain_wall_us_per_result} / ${out.write_fenced_wall_us_per_result} µs)`,
);
console.log(JSON.stringify(out));
