/**
 * npm run bench:cluster — the monitor service as one LMDB process, then as a cluster of 3 processes on one fresh
 * PostgreSQL database (PG_URL names the server), with N url monitors at 1MIN (CLUSTER_BENCH_N, default 50,000: the
 * product's 2-core target, and a load at which the instances do work rather than wait — decision 167) against
 * a recording HTTP target in a child process (its CPU is not counted). Each phase warms up for
 * CLUSTER_BENCH_WARM_SECONDS (default 75: one 1MIN interval + 15 s, so every monitor has run once and the window holds
 * no first run — a monitor's first result writes its alert state, transition and latest status: start-up work, not
 * steady state), then measures for CLUSTER_BENCH_SECONDS (default 120, rounded to whole minutes), in a window that
 * starts 54 s past a minute (between two runs of every monitor: each phase's window then holds the same runs, decision
 * 170) and does not hold the close of a UTC hour (the hour's compaction, once an hour, would count ~30× its share in
 * 2 minutes; it waits past it):
 * checks per CPU-second per instance (requests the target saw ÷ the instances' user+system CPU from /proc), wake-ups
 * per check (the main thread's voluntary context switches), CPU per 1,000 checks by thread (the event loop; the other
 * threads: V8's GC workers, libuv's pool) and as user/system time, missed and duplicate runs per monitor, PostgreSQL
 * backends' CPU (the bench database's connections only) and bytes (database size and WAL growth) per 1,000 results.
 * After the cluster's window, one member's details of monitors another member runs: the first read (which asks the
 * holder for the monitor's open hours, decision 174; and, as the baseline, a member without the shared key files,
 * which loads them from the WAL, decision 173) and the next (from memory), medians of 3 monitors.
 * Then kill -9 of one member: time until every monitor of its shards ran again; then a new member joins: time until the
 * shards are spread over 3 members again.
 * CLUSTER_BENCH_PHASES (default `lmdb,cluster,lmdb_again`: the single process is measured before and after the
 * cluster, and the member set against the mean of both windows, `cluster3_vs_lmdb_mean_checks_per_cpu_s_pct`, as well
 * as against the first, `cluster3_vs_lmdb_checks_per_cpu_s_pct`: one window of one process drifts by as much as the
 * target allows, decisions 186–187) can add `lmdb_third` (one LMDB process with N/3: one member's load) and `lmdb3`
 * (three LMDB processes with N/3 each: the cluster's processes and load without PostgreSQL), which split the
 * cluster's gap to the single process into load, process count and PostgreSQL (docs/scale.md).
 * The service processes run the compiled build (dist/, built first) with `npm start`'s monitor flags, as operators run
 * it; CLUSTER_BENCH_RUN=tsx runs src/ through tsx as the bench did before decision 178.
 * CLUSTER_BENCH_NODE_FLAGS: extra Node/V8 flags for every service process of every phase (space-separated; e.g. a
 * GC setting measured against the default in alternate runs). CLUSTER_BENCH_OUTPUT_DIR=<dir>: every service process's
 * output also goes to `<dir>/<phase>-<i>.log` (with `--trace-gc` in the flags: its collections, decision 172).
 * CLUSTER_BENCH_INSTANCE_FLAGS (`<label>=<flags>;…`): flags for one process only, a paired comparison in one run.
 * The cluster phase also reports each member's own figures (`cluster3_instance_<i>_…`: its shards' checks, CPU, RSS,
 * thread split); CLUSTER_BENCH_START_ORDER (default `0,1,2`) sets the order the members start in, and
 * CLUSTER_BENCH_RESTART_FIRST=1 restarts the first once the others have joined. The seeded stores
 * carry this build's format record, so no service process starts by migrating the seeded monitors (a one-off upgrade
 * step, which the LMDB phase's one process and one member of three used to make: decision 185);
 * CLUSTER_BENCH_SEED=old seeds as before.
 * CLUSTER_BENCH_HANDOVER=0 skips the kill and join phases (efficiency only). BENCH_CPU_PROFILE=<dir>: a V8 CPU profile
 * of every instance over the measured window (bench/cpu-profile-hook.ts), `<phase>-<i>-0.cpuprofile`.
 * Then the control (bench/http-rate-control.ts; CLUSTER_BENCH_CONTROL=0 skips it): a plain node:http client's CPU per
 * request at the single process's rate and at a third of it — what this machine charges any process for doing a third
 * as much, the bound on a member's figure — and the cluster's ratio set against it.
 * Last line: one JSON object, units in the names. Linux only (/proc).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import type { StoreConfig } from '../src/core/storage/open-store.js';
import { shardOf } from '../src/monitor/cluster/shards.js';
import {
  leaseHolders,
  runStats,
  spreadOver,
  startServiceProcess,
  waitForHolders,
  type ServiceProcess,
} from '../test/support/cluster-fleet.harness.js';
import { certsFrom, HttpsClient } from '../test/support/https-client.kit.js';
import { httpRateControl } from './http-rate-control.js';
import { startRecordingTarget, type RecordingTarget } from '../test/support/recording-target.fixture.js';
import { seededName, seedUrlMonitors } from '../test/support/seed-monitors.kit.js';
import { sharedDataDir } from '../test/support/monitor.harness.js';
import { ensureBuilt } from '../test/support/build.kit.js';
import { serviceFlags } from '../test/support/service-flags.kit.js';
import { BackendCpu, TICK_HZ, cpuTicks } from './proc-stat.js';
import { createTestDatabase } from '../test/support/pg-database.fixture.js';

const N = Number(process.env.CLUSTER_BENCH_N ?? 50_000);
/** The measured window in whole minutes (the monitors' interval): a part-minute window holds some monitors once and
 * others twice, by where it falls in the minute (decision 170). */
const MEASURE_S = Math.max(1, Math.round(Number(process.env.CLUSTER_BENCH_SECONDS ?? 120) / 60)) * 60;
/** Where in the minute the window starts: after every monitor's run of the minute (offsets < 48 s). */
const WINDOW_AT_MS = 54_000;
const WARM_S = Number(process.env.CLUSTER_BENCH_WARM_SECONDS ?? 75);
/** The hour's compaction: the close grace (10 s) and the flushes compacting every series (~2 s per 1,000). */
const HOUR_CLOSE_S = 60;
const HANDOVER = process.env.CLUSTER_BENCH_HANDOVER !== '0';
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const NODE_FLAGS = (process.env.CLUSTER_BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');
/** The order the cluster's members start in (CLUSTER_BENCH_START_ORDER, default 0,1,2; member 1 shares member 0's key
 * files, so 0 starts before 1): the first runs every monitor until the others join. */
const START_ORDER = (process.env.CLUSTER_BENCH_START_ORDER ?? '0,1,2').split(',').map(Number);
if ([...START_ORDER].sort().join() !== '0,1,2' || START_ORDER.indexOf(0) > START_ORDER.indexOf(1))
  throw new Error('CLUSTER_BENCH_START_ORDER: 0, 1 and 2 once each, 0 before 1');
/** CLUSTER_BENCH_RESTART_FIRST=1: the member started first is restarted once the others have joined (decision 185). */
const RESTART_FIRST = process.env.CLUSTER_BENCH_RESTART_FIRST === '1';
/** The seeded stores carry this build's format record, so no service process starts by migrating the seeded monitors
 * (CLUSTER_BENCH_SEED=old: as before 2026-11-29, the first process of each phase migrates them all). */
const SEED_CURRENT = process.env.CLUSTER_BENCH_SEED !== 'old';
/** Extra flags for named processes only (`<label>=<flags>;…`, e.g. `cluster3-1=--heap-growing-percent=300`): a
 * paired comparison inside one run, where the other members share the window, the machine and its noise. */
const INSTANCE_FLAGS = new Map<string, string[]>();
for (const entry of (process.env.CLUSTER_BENCH_INSTANCE_FLAGS ?? '').split(';')) {
  const at = entry.indexOf('=');
  if (at > 0)
    INSTANCE_FLAGS.set(
      entry.slice(0, at).trim(),
      entry
        .slice(at + 1)
        .split(' ')
        .filter(Boolean),
    );
}
/** What the service processes run (decision 178): `dist`, the compiled build with the flags `npm start` gives the
 * monitor (built first, incrementally), as operators run it; or `tsx`, src/ through tsx as before (its keepNames
 * transform defines a name on every closure it creates, a per-check cost the build does not have). */
const RUN = process.env.CLUSTER_BENCH_RUN ?? 'dist';
if (RUN !== 'dist' && RUN !== 'tsx') throw new Error(`CLUSTER_BENCH_RUN must be dist or tsx, not ${RUN}`);
/** Each service process's output (stdout and stderr) goes to `<dir>/<label>.log` too (e.g. with `--trace-gc`). */
const OUTPUT_DIR = process.env.CLUSTER_BENCH_OUTPUT_DIR;
if (OUTPUT_DIR) fs.mkdirSync(OUTPUT_DIR, { recursive: true });
/** Phases in order: lmdb (1 process, N), lmdb_third (1 process, N/3), lmdb3 (3 processes, N/3 each), cluster,
 * lmdb_again (1 process, N: the baseline once more, after the cluster, decision 187). */
const PHASES = (process.env.CLUSTER_BENCH_PHASES ?? 'lmdb,cluster,lmdb_again').split(',');
/** The plain-Node control after the phases (bench/http-rate-control.ts); CLUSTER_BENCH_CONTROL=0 skips it. */
const CONTROL = process.env.CLUSTER_BENCH_CONTROL !== '0';
const CONTROL_S = 30;
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const MONITOR_FLAGS = serviceFlags(ROOT).monitor;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const out: Record<string, number> = { monitors: N, measure_s: MEASURE_S };

const NAMES = Array.from({ length: N }, (_, j) => seededName('b', j));

/** Monitors b-<from>…b-<to − 1>. */
async function seed(store: StoreConfig, target: RecordingTarget, from = 0, to = N): Promise<void> {
  const url = (j: number) => target.urlFor(seededName('b', j));
  await seedUrlMonitors(store, to - from, {
    prefix: 'b',
    from,
    url,
    timeout: '10',
    probe: 'default',
    current: SEED_CURRENT,
  });
}

/** One monitor service process; resolves once it listens. */
async function startInstance(env: Record<string, string>, label: string, dataDir?: string): Promise<ServiceProcess> {
  // As src/start-all.ts: the build with source maps, or src/ through tsx. The profile hook is TypeScript: tsx loads
  // it either way (tsx leaves dist/'s .js files as they are).
  const hook = PROFILE_DIR ? ['--import', path.join(ROOT, 'bench/cpu-profile-hook.ts')] : [];
  const loader = RUN === 'tsx' || PROFILE_DIR ? ['--import', 'tsx', ...hook] : [];
  const main = RUN === 'tsx' ? 'src/monitor/main.ts' : 'dist/monitor/main.js';
  const sourceMaps = RUN === 'tsx' ? [] : ['--enable-source-maps'];
  const own = INSTANCE_FLAGS.get(label) ?? [];
  const args = [...MONITOR_FLAGS, ...sourceMaps, ...NODE_FLAGS, ...own, ...loader, path.join(ROOT, main)];
  const outputFile = OUTPUT_DIR ? path.join(OUTPUT_DIR, `${label}.log`) : undefined;
  return startServiceProcess({ args, env: { BENCH_PROFILE_LABEL: label, ...env }, dataDir, outputFile });
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** The main thread's voluntary context switches: each is the event loop going to sleep and being woken. */
function wakeups(pid: number): number {
  try {
    return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * CPU ticks of a process's threads: main (the event loop), other_threads (V8's GC and compiler workers, libuv's pool:
 * Node 20 names them all "node", so they are not told apart), and user/system over all threads.
 */
function threadTicks(pid: number): Record<string, number> {
  const t: Record<string, number> = { main: 0, other_threads: 0, user: 0, system: 0 };
  let tids: string[] = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return t;
  }
  for (const tid of tids) {
    try {
      const raw = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = raw.slice(raw.lastIndexOf(') ') + 2).split(' ');
      const [user, sys] = [Number(f[11]), Number(f[12])];
      t[tid === String(pid) ? 'main' : 'other_threads']! += user + sys;
      t.user! += user;
      t.system! += sys;
    } catch {
      // the thread ended meanwhile
    }
  }
  return t;
}

/**
 * Waits for the measured window's start: 54 s past a UTC minute, in the gap of every 1MIN monitor's runs (a preset's
 * runs start at the minute + a stable offset in [0, 48 s): schedule.ts, spread 0.8), and where [start, start +
 * MEASURE_S] holds no UTC hour's close (the hour start and HOUR_CLOSE_S after it). A window of whole minutes starting
 * there holds exactly MEASURE_S / 60 runs of every monitor, in every phase (decision 170).
 */
async function windowStart(): Promise<void> {
  const hourMs = 3_600_000;
  let start = Date.now();
  for (;;) {
    start = Math.ceil((start - WINDOW_AT_MS) / 60_000) * 60_000 + WINDOW_AT_MS;
    const closeStart = Math.floor(start / hourMs) * hourMs; // the start of the hour holding `start`
    const closeEnd = closeStart + HOUR_CLOSE_S * 1000;
    if (start < closeEnd) start = closeEnd;
    else if (start + MEASURE_S * 1000 > closeStart + hourMs) start = closeStart + hourMs + HOUR_CLOSE_S * 1000;
    else break;
  }
  await sleep(start - Date.now());
}

/** Measures one phase: CPU of `pids` and checks the target saw over MEASURE_S after WARM_S (monitors b0…b<n − 1>). */
async function measure(label: string, pids: number[], target: RecordingTarget, db?: pg.Client, n = N) {
  await sleep(WARM_S * 1000);
  await windowStart();
  await target.take();
  const pgStat = db ? await pgBytes(db) : undefined;
  const cpu0 = pids.map(cpuTicks);
  const wake0 = pids.map(wakeups);
  const threads0 = pids.map(threadTicks);
  // Backends come and go with the pools: listed again at every sample, once a second.
  const pgCpu = db ? new BackendCpu(db) : undefined;
  await pgCpu?.sample();
  if (PROFILE_DIR) for (const p of pids) process.kill(p, 'SIGUSR2');
  const t0 = Date.now();
  while (Date.now() - t0 < MEASURE_S * 1000) {
    await sleep(1000);
    await pgCpu?.sample();
  }
  const cpuS = pids.map((p, i) => (cpuTicks(p) - cpu0[i]!) / TICK_HZ);
  const wakes = pids.reduce((sum, p, i) => sum + wakeups(p) - wake0[i]!, 0);
  const threads1 = pids.map(threadTicks);
  if (PROFILE_DIR) for (const p of pids) process.kill(p, 'SIGUSR2');
  const pgCpuS = (pgCpu?.ms() ?? 0) / 1000;
  const seen = await target.take();
  const t1 = Date.now();
  const { total, missed, duplicates: dup } = runStats(seen, NAMES.slice(0, n), t0, t1);
  const sumCpu = cpuS.reduce((a, b) => a + b, 0);
  out[`${label}_instances`] = pids.length;
  out[`${label}_checks_per_s`] = Math.round((total / ((t1 - t0) / 1000)) * 10) / 10;
  out[`${label}_checks_per_cpu_s_per_instance`] = Math.round(total / sumCpu);
  out[`${label}_instance_cpu_s_max`] = Math.max(...cpuS);
  out[`${label}_instance_cpu_s_min`] = Math.min(...cpuS);
  out[`${label}_instance_rss_mb_max`] = Math.max(...pids.map(rssMb));
  // Where the instances' CPU went (sums over instances, per 1,000 checks): the event loop, the other threads.
  for (const kind of Object.keys(threads1[0]!)) {
    const ticks = threads1.reduce((sum, t, i) => sum + t[kind]! - threads0[i]![kind]!, 0);
    out[`${label}_cpu_ms_per_1000_checks_${kind}`] = Math.round(((ticks / TICK_HZ) * 1000 * 1000) / total);
  }
  out[`${label}_wakeups_per_check`] = Math.round((wakes / total) * 100) / 100;
  if (db) await perInstance(label, db, pids, seen, { t0, t1, n, cpuS, threads0, threads1 });
  out[`${label}_missed_runs`] = missed;
  out[`${label}_duplicate_runs`] = dup;
  if (db && pgStat) {
    const after = await pgBytes(db);
    out[`${label}_pg_backend_cpu_ms_per_10_results`] = Math.round((pgCpuS * 1000 * 10 * 1000) / total) / 1000;
    out[`${label}_pg_db_bytes_per_1000_results`] = Math.round(((after.size - pgStat.size) * 1000) / total);
    out[`${label}_pg_wal_bytes_per_1000_results_all_dbs`] = Math.round(((after.wal - pgStat.wal) * 1000) / total);
  }
  return seen;
}

/**
 * Each member's own figures (the checks of the shards it holds at the window's end, its CPU, RSS and thread split):
 * the spread between the members of one run, and a paired comparison when one member runs with something the others
 * do not (CLUSTER_BENCH_INSTANCE_FLAGS, CLUSTER_BENCH_START_ORDER).
 */
async function perInstance(
  label: string,
  db: pg.Client,
  pids: number[],
  seen: Awaited<ReturnType<RecordingTarget['take']>>,
  w: {
    t0: number;
    t1: number;
    n: number;
    cpuS: number[];
    threads0: Array<Record<string, number>>;
    threads1: Array<Record<string, number>>;
  },
): Promise<void> {
  const holders = await leaseHolders(db);
  const names = NAMES.slice(0, w.n);
  const shardOfName = names.map(shardOf); // once, not once per member
  pids.forEach((pid, i) => {
    const held = new Set([...holders].find(([id]) => id.includes(`-${pid}-`))?.[1] ?? []);
    const mine = names.filter((_, j) => held.has(shardOfName[j]!));
    const checks = runStats(seen, mine, w.t0, w.t1).total;
    const at = `${label}_instance_${i}`;
    out[`${at}_checks`] = checks;
    out[`${at}_cpu_s`] = w.cpuS[i]!;
    out[`${at}_checks_per_cpu_s`] = Math.round(checks / w.cpuS[i]!);
    out[`${at}_rss_mb`] = rssMb(pid);
    for (const kind of ['main', 'other_threads']) {
      const ms = ((w.threads1[i]![kind]! - w.threads0[i]![kind]!) / TICK_HZ) * 1000;
      out[`${at}_cpu_ms_per_1000_checks_${kind}`] = Math.round((ms * 1000) / checks);
    }
  });
}

async function pgBytes(db: pg.Client): Promise<{ size: number; wal: number }> {
  const r = await db.query<{ size: string; wal: string }>(
    `SELECT pg_database_size(current_database()) AS size, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') AS wal`,
  );
  const row = r.rows[0]!;
  return { size: Number(row.size), wal: Number(row.wal) };
}

/**
 * `count` LMDB processes, each with its own store holding `perInstance` of the monitors (b0…): phase `lmdb` is one
 * process with all N; `lmdb_third` one with N/3 (one cluster member's load, alone); `lmdb3` three with N/3 each
 * (the cluster's process count and load, without PostgreSQL).
 */
async function lmdbPhase(label: string, count: number, perInstance: number, target: RecordingTarget): Promise<void> {
  const dirs: string[] = [];
  const insts: ChildProcess[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cluster-lmdb-'));
      dirs.push(dataDir);
      const from = i * perInstance;
      await seed({ driver: 'lmdb', path: path.join(dataDir, 'monitor-db') }, target, from, from + perInstance);
      insts.push((await startInstance({}, `${label}-${i}`, dataDir)).child);
    }
    await measure(
      label,
      insts.map((c) => c.pid!),
      target,
      undefined,
      count * perInstance,
    );
    if (PROFILE_DIR) await sleep(3000); // the profiles are written
  } finally {
    for (const c of insts) c.kill('SIGKILL');
    await sleep(500);
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

/**
 * A member's details of monitors another member runs: the first read of each asks the holder for its open hours
 * (decision 174; `from_wal`: the baseline — a member without the cluster's key files, whose request the holder refuses,
 * loads them from the WAL: history-follow.ts `load`, one read of every record), the next is served from memory.
 * Medians of 3 monitors held by `holder`.
 */
async function readLatency(
  db: pg.Client,
  reader: ServiceProcess,
  holder: ServiceProcess,
  password: string,
  suffix: string,
): Promise<void> {
  const api = new HttpsClient(reader.url, certsFrom(path.join(reader.dataDir, 'certs')));
  await api.login('admin', password);
  const theirs = new Set([...(await leaseHolders(db))].find(([id]) => holder.isMember(id))?.[1] ?? []);
  const names = NAMES.filter((n) => theirs.has(shardOf(n))).slice(0, 3);
  const timed = async (name: string) => {
    const t0 = performance.now();
    const r = await api.request('POST', '/getMonitorDetails', { body: { type: 'url', name, sched: '1MIN' } });
    const recent = (r.body as { recent?: unknown[] }).recent?.length ?? 0;
    if (r.status !== 200 || recent === 0) throw new Error(`details of ${name}: ${r.status}, ${recent} recent`);
    return performance.now() - t0;
  };
  const median = (v: number[]) => Math.round(v.sort((a, b) => a - b)[Math.floor(v.length / 2)]! * 10) / 10;
  const cold: number[] = [];
  const warm: number[] = [];
  for (const n of names) {
    cold.push(await timed(n));
    warm.push(await timed(n));
  }
  out[`cluster3_details_held_elsewhere_first_read${suffix}_ms`] = median(cold);
  out[`cluster3_details_held_elsewhere_next_read${suffix}_ms`] = median(warm);
}

/** kill -9 of one member: ms from the kill until every monitor of its shards has run again (max over them). */
async function killPhase(db: pg.Client, insts: ChildProcess[], target: RecordingTarget) {
  const victim = insts[2]!;
  const held = new Set([...(await leaseHolders(db))].find(([id]) => id.includes(`-${victim.pid}-`))?.[1] ?? []);
  const names = NAMES.filter((n) => held.has(shardOf(n)));
  await sleep(60_000); // a full interval of runs before the kill, to measure each monitor's gap
  const before = await target.take();
  for (const n of names) before[n] ??= [];
  const killMs = Date.now();
  victim.kill('SIGKILL');
  out.handover_shards_moved = held.size;
  out.handover_takeover_ms = await waitForHolders(db, spreadOver(2), 120_000);
  const deadline = killMs + 150_000;
  const seen: Record<string, number[]> = {};
  let waiting = names;
  while (waiting.length && Date.now() < deadline) {
    await sleep(2000);
    for (const [k, v] of Object.entries(await target.take())) (seen[k] ??= []).push(...v);
    waiting = waiting.filter((n) => !(seen[n] ?? []).some((t) => t > killMs));
  }
  out.handover_monitors_not_rerun = waiting.length;
  const firstAfter = (n: string) => Math.min(...(seen[n] ?? [Infinity]).filter((t) => t > killMs));
  out.handover_all_rerun_after_kill_ms = Math.max(...names.map((n) => firstAfter(n) - killMs));
  // Longest time a monitor of the killed member went without a run (one interval = 60,000 when nothing is lost).
  out.handover_max_gap_between_runs_ms = Math.max(
    ...names.map((n) => firstAfter(n) - Math.max(...before[n]!.filter((t) => t <= killMs), killMs - 60_000)),
  );
  out.handover_monitors_run_twice_within_30_s = names.filter((n) => {
    const t = [...before[n]!, ...(seen[n] ?? [])].sort((a, b) => a - b).filter((x) => x > killMs - 60_000);
    return t.some((x, i) => i > 0 && x - t[i - 1]! < 30_000);
  }).length;
}

async function clusterPhase(target: RecordingTarget): Promise<void> {
  const made = await createTestDatabase('bench_cluster');
  if ('unavailable' in made) throw new Error(made.unavailable);
  const url = made.url;
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const insts: ChildProcess[] = [];
  let shared: string | undefined;
  let restarted: string | undefined;
  try {
    await seed({ driver: 'postgres', url, namespace: 'monitor' }, target);
    const env = { STORE_URL: url, PROBE: 'bench', ADMIN_PASSWORD: 'bench-admin-pass' };
    // Members 0 and 1 share their key files (docs/cluster.md); member 2 keeps its own (as every member did before
    // decision 174): its reads of another's monitors fall back to the WAL, the first read's baseline.
    const members: ServiceProcess[] = [];
    for (const i of START_ORDER) {
      if (i === 1) shared = sharedDataDir(members[0]!.dataDir);
      members[i] = await startInstance(env, `cluster3-${i}`, i === 1 ? shared : undefined);
    }
    await waitForHolders(db, spreadOver(3), 120_000);
    if (RESTART_FIRST) {
      // The member started first, restarted (same key files) once the others hold their share: its new process never
      // ran every monitor of the cluster.
      const i = START_ORDER[0]!;
      restarted = sharedDataDir(members[i]!.dataDir);
      const exited = new Promise((resolve) => members[i]!.child.once('exit', resolve));
      members[i]!.child.kill('SIGTERM');
      await exited;
      members[i] = await startInstance(env, `cluster3-${i}`, restarted);
      await waitForHolders(db, spreadOver(3), 120_000);
    }
    insts.push(...members.map((m) => m.child));
    await measure(
      'cluster3',
      insts.map((c) => c.pid!),
      target,
      db,
    );
    await readLatency(db, members[0]!, members[1]!, env.ADMIN_PASSWORD, '');
    await readLatency(db, members[2]!, members[0]!, env.ADMIN_PASSWORD, '_from_wal');
    if (PROFILE_DIR) await sleep(3000); // the profiles are written
    if (!HANDOVER) return;
    await killPhase(db, insts, target);
    const t0 = Date.now();
    insts.push((await startInstance(PROFILE_DIR ? { ...env, BENCH_PROFILE_START: '1' } : env, 'join')).child);
    out.join_start_ms = Date.now() - t0;
    if (PROFILE_DIR) process.kill(insts[insts.length - 1]!.pid!, 'SIGUSR2'); // the start-up profile
    out.join_converge_after_listen_ms = await waitForHolders(db, spreadOver(3), 120_000);
  } finally {
    for (const c of insts) c.kill('SIGKILL');
    await db.end();
    await sleep(1000);
    for (const dir of [shared, restarted]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
    await made.drop();
  }
}

/**
 * The control (bench/http-rate-control.ts): a plain node:http client's CPU per request at the single process's rate
 * and at a third of it, twice each in turn (medians), and the cluster's ratio set against it.
 */
async function control(fullRate: number): Promise<void> {
  const rates = [fullRate, fullRate / 3, fullRate, fullRate / 3].map((r) => Math.round(r * 10) / 10);
  const figs = await httpRateControl(rates, CONTROL_S);
  const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const full = med(figs.filter((_, i) => i % 2 === 0).map((f) => f.cpuUsPerRequest));
  const thirdUs = med(figs.filter((_, i) => i % 2 === 1).map((f) => f.cpuUsPerRequest));
  out.control_full_rate_cpu_us_per_request = full;
  out.control_third_rate_cpu_us_per_request = thirdUs;
  out.control_third_vs_full_requests_per_cpu_s_pct = Math.round((full / thirdUs) * 100);
  if (out.cluster3_vs_lmdb_checks_per_cpu_s_pct)
    out.cluster3_vs_lmdb_over_control_pct = Math.round(
      (out.cluster3_vs_lmdb_checks_per_cpu_s_pct / out.control_third_vs_full_requests_per_cpu_s_pct) * 100,
    );
}

if (RUN === 'dist') ensureBuilt();
const target = await startRecordingTarget();
const third = Math.floor(N / 3);
try {
  for (const phase of PHASES) {
    if (phase === 'lmdb') await lmdbPhase('lmdb', 1, N, target);
    else if (phase === 'lmdb_again') await lmdbPhase('lmdb_again', 1, N, target);
    else if (phase === 'lmdb_third') await lmdbPhase('lmdb_third', 1, third, target);
    else if (phase === 'lmdb3') await lmdbPhase('lmdb3', 3, third, target);
    else if (phase === 'cluster') await clusterPhase(target);
    else throw new Error(`unknown phase ${phase}`);
  }
  for (const base of ['lmdb_third', 'lmdb3', 'lmdb_again']) {
    const f = out[`${base}_checks_per_cpu_s_per_instance`];
    if (f && out.lmdb_checks_per_cpu_s_per_instance)
      out[`${base}_vs_lmdb_checks_per_cpu_s_pct`] = Math.round((f / out.lmdb_checks_per_cpu_s_per_instance) * 100);
  }
  if (out.cluster3_checks_per_cpu_s_per_instance && out.lmdb_checks_per_cpu_s_per_instance)
    out.cluster3_vs_lmdb_checks_per_cpu_s_pct = Math.round(
      (out.cluster3_checks_per_cpu_s_per_instance / out.lmdb_checks_per_cpu_s_per_instance) * 100,
    );
  const again = out.lmdb_again_checks_per_cpu_s_per_instance;
  if (out.cluster3_checks_per_cpu_s_per_instance && out.lmdb_checks_per_cpu_s_per_instance && again) {
    const mean = (out.lmdb_checks_per_cpu_s_per_instance + again) / 2;
    out.cluster3_vs_lmdb_mean_checks_per_cpu_s_pct = Math.round(
      (out.cluster3_checks_per_cpu_s_per_instance / mean) * 100,
    );
  }
  if (out.cluster3_checks_per_cpu_s_per_instance && out.lmdb3_checks_per_cpu_s_per_instance)
    out.cluster3_vs_lmdb3_checks_per_cpu_s_pct = Math.round(
      (out.cluster3_checks_per_cpu_s_per_instance / out.lmdb3_checks_per_cpu_s_per_instance) * 100,
    );
  if (CONTROL && out.lmdb_checks_per_s) await control(out.lmdb_checks_per_s);
} finally {
  target.close();
}
console.log(
  `service processes ran ${RUN === 'dist' ? 'dist/ (the build)' : 'src/ through tsx'} with ${[...MONITOR_FLAGS, ...NODE_FLAGS].join(' ')}`,
);
console.log(JSON.stringify(out));
process.exit(0);
