/**
 * The scheduler under 10,000 then 50,000 monitors at 1MIN, then a restart with 10,000. Phase A (scheduler + bare
 * checks): `npx tsx bench/scheduler.ts`; `npm run bench:scheduler` runs bench/scheduler-service.ts, which drives the
 * whole service through runSchedulerBench({ makeSubject }).
 *
 * Phase A (this file's default subject): the real scheduler (src/monitor/scheduler) driving a bare fresh-connection
 * node:http GET per check against a local HTTP target running in a CHILD process (so its CPU is not counted: only
 * this process's process.cpuUsage() is). The lead swaps in the whole service through `runSchedulerBench({
 * makeSubject })`: a subject creates n url monitors pointing at the target, and passes `observer` to its scheduler.
 *
 * In the same run: a bare fresh-connection node:http GET loop against the same target (the machine's limit).
 * Env: BENCH_MINUTES (measured minutes per size, default 3), BENCH_SIZES (default "10000,50000"), BENCH_RESTART_SIZE
 * (default 10000, 0 = skip), BENCH_RUN (http | noop, default http), BENCH_CONCURRENCY (default 500), BENCH_BATCH_MS
 * and BENCH_SPREAD_FRACTION (scheduler tuning for the default subject; default the scheduler's own), BENCH_CPU_PROFILE
 * (a folder: writes a V8 CPU profile of each measured window), BENCH_HEAP_PROFILE (a folder: a sampling heap
 * profile of each window), BENCH_API_SECONDS (the API phase after the CPU minutes, default 60, 0 = none).
 * The last line printed is one JSON object of the figures.
 */
import http from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import pino, { type Logger } from 'pino';
import { createScheduler, type RunObserver, type SchedulerStats } from '../src/monitor/scheduler/scheduler.js';
import { LatenessHistogram } from '../src/monitor/scheduler/lateness-histogram.js';
import { parseSchedule } from '../src/monitor/scheduler/schedule.js';

const MIN_MS = 60_000;

/** What the bench drives: the scheduler alone (phase A) or the whole service (the lead's runner). */
export interface BenchSubject {
  /** Creates n enabled url monitors at 1MIN whose url is targetUrls[i % targetUrls.length]. */
  addMonitors(n: number): Promise<void>;
  start(): void | Promise<void>;
  stop(): Promise<void>;
  stats(): SchedulerStats;
  /** Optional: starts sampling the API under load (after the CPU minutes; see measureSize). */
  startApiProbes?(): Promise<void>;
  /** Optional: API latency samples in ms taken since the last call (GET /monitors, POST /login...), keyed by name. */
  probeApi?(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export interface MakeSubjectContext {
  targetUrls: string[];
  /** Must be passed to the subject's scheduler (createScheduler({ observer })). */
  observer: RunObserver;
  concurrencyLimit: number;
  log: Logger;
}

export type MakeSubject = (ctx: MakeSubjectContext) => Promise<BenchSubject>;

/** One check: GET on a fresh connection, body drained; resolves with the status code. */
export function freshGet(url: URL, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { host: url.hostname, port: url.port, path: url.pathname, agent: false, timeout: timeoutMs },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Phase A subject: the scheduler + a bare fresh-connection GET (or a no-op) as the run function. */
export function makeBareSubject(
  mode: 'http' | 'noop',
  tuning: { batchMs?: number; spreadFraction?: number } = {},
): MakeSubject {
  return async (ctx) => {
    const targets = new Map<string, URL>();
    const sched = createScheduler({
      ...tuning,
      log: ctx.log,
      concurrencyLimit: ctx.concurrencyLimit,
      observer: ctx.observer,
      run: async (id) => {
        if (mode === 'noop') return;
        const url = targets.get(id);
        if (url === undefined) throw new Error('unknown monitor');
        const status = await freshGet(url);
        if (status >= 400) throw new Error(`status ${status}`);
      },
    });
    const urls = ctx.targetUrls.map((u) => new URL(u));
    return {
      async addMonitors(n) {
        for (let i = 0; i < n; i++) {
          const id = `url:bench-${i}`;
          targets.set(id, urls[i % urls.length]!);
          sched.upsert(id, parseSchedule('1MIN'), { enabled: true });
        }
      },
      start: () => sched.start(),
      stop: () => sched.stop(),
      stats: () => sched.stats(),
      close: async () => undefined,
    };
  };
}

const TARGET_SERVER_JS = `
const http = require('node:http');
const hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'];
const handler = (req, res) => { res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }); res.end('ok'); };
const first = http.createServer(handler);
first.listen(0, hosts[0], 4096, () => {
  const port = first.address().port;
  let up = 1;
  for (const h of hosts.slice(1)) http.createServer(handler).listen(port, h, 4096, () => { if (++up === hosts.length) process.stdout.write(port + '\\n'); });
});
process.on('disconnect', () => process.exit(0));
process.stdin.on('end', () => process.exit(0)); process.stdin.resume();
`;

async function startTarget(): Promise<{ child: ChildProcess; urls: string[] }> {
  const child = spawn(process.execPath, ['-e', TARGET_SERVER_JS], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (b: Buffer) => resolve(Number(String(b).trim())));
    child.once('exit', (code) => reject(new Error(`target exited ${code}`)));
  });
  return { child, urls: [1, 2, 3, 4].map((h) => `http://127.0.0.${h}:${port}/health`) };
}

function gcNow(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
}

const optNumber = (v: string | undefined): number | undefined => (v === undefined || v === '' ? undefined : Number(v));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const round = (v: number, d = 1): number => Math.round(v * 10 ** d) / 10 ** d;

/** The machine's limit: fresh-connection GETs in a loop with `concurrency` in flight. */
export async function bareGetLoop(
  urls: string[],
  checks: number,
  concurrency = 64,
): Promise<{ checksPerS: number; checksPerCpuS: number }> {
  const parsed = urls.map((u) => new URL(u));
  let next = 0;
  const t0 = performance.now();
  const c0 = cpuMs();
  const worker = async () => {
    while (next < checks) {
      const i = next++;
      await freshGet(parsed[i % parsed.length]!).catch(() => 0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallS = (performance.now() - t0) / 1000;
  const cpuS = (cpuMs() - c0) / 1000;
  return { checksPerS: round(checks / wallS), checksPerCpuS: round(checks / cpuS) };
}

interface Recorder {
  observer: RunObserver;
  startsByMinute: Map<number, number>;
  firstStart: Map<string, number>;
  hist: LatenessHistogram;
  durations: LatenessHistogram;
  window: { fromMs: number; toMs: number };
  completed: number;
  /** Every successful run, in the window or not. */
  allCompleted: number;
  failed: number;
}

function createRecorder(trackFirst: boolean): Recorder {
  const r: Recorder = {
    startsByMinute: new Map(),
    firstStart: new Map(),
    hist: new LatenessHistogram(),
    durations: new LatenessHistogram(),
    window: { fromMs: Number.POSITIVE_INFINITY, toMs: Number.POSITIVE_INFINITY },
    completed: 0,
    allCompleted: 0,
    failed: 0,
    observer: {
      onStart(id, ctx) {
        if (ctx.trigger !== 'schedule') return;
        if (trackFirst && !r.firstStart.has(id)) r.firstStart.set(id, ctx.startMs);
        if (ctx.dueMs < r.window.fromMs || ctx.dueMs >= r.window.toMs) return;
        const m = Math.floor(ctx.dueMs / MIN_MS);
        r.startsByMinute.set(m, (r.startsByMinute.get(m) ?? 0) + 1);
        r.hist.record(Math.max(0, ctx.latenessMs));
      },
      onEnd(_id, ctx, ok, endMs) {
        if (ok) r.allCompleted++;
        if (endMs < r.window.fromMs || endMs >= r.window.toMs) return;
        r.durations.record(endMs - ctx.startMs);
        if (ok) r.completed++;
        else r.failed++;
      },
    },
  };
  return r;
}

interface BenchConfig {
  makeSubject: MakeSubject;
  targetUrls: string[];
  minutes: number;
  concurrencyLimit: number;
  log: Logger;
  gc: () => void;
}

/** CPU ms per thread id from /proc/self/task (Linux; empty elsewhere): the main thread's share vs GC/libuv/lmdb threads. */
function threadCpuMs(): Map<number, number> {
  const out = new Map<number, number>();
  const tick = 10; // USER_HZ = 100 on Linux
  try {
    for (const tid of fs.readdirSync('/proc/self/task')) {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * tick);
    }
  } catch {
    // not Linux: no per-thread figures
  }
  return out;
}

/**
 * BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of each measured window only (warm-up and set-up excluded);
 * BENCH_HEAP_PROFILE=<dir>: a sampling heap profile of the window (what it allocated that is still in the heap).
 */
async function startCpuProfile(n: number): Promise<() => Promise<void>> {
  const dir = process.env.BENCH_CPU_PROFILE;
  const heapDir = process.env.BENCH_HEAP_PROFILE;
  if (!dir && !heapDir) return async () => {};
  const session = new Session();
  session.connect();
  if (dir) {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  if (heapDir) await session.post('HeapProfiler.startSampling', { samplingInterval: 16384 });
  return async () => {
    if (dir) {
      const { profile } = await session.post('Profiler.stop');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(`${dir}/scheduler-${n}.cpuprofile`, JSON.stringify(profile));
    }
    if (heapDir) {
      // Allocations of the window not yet collected when it ends (old-space garbage included until a full GC).
      const { profile } = await session.post('HeapProfiler.stopSampling');
      fs.mkdirSync(heapDir, { recursive: true });
      fs.writeFileSync(`${heapDir}/scheduler-${n}.heapprofile`, JSON.stringify(profile));
    }
    session.disconnect();
  };
}

async function measureSize(cfg: BenchConfig, n: number): Promise<Record<string, number>> {
  const rec = createRecorder(false);
  cfg.gc();
  const mem0 = process.memoryUsage();
  const subject = await cfg.makeSubject({
    targetUrls: cfg.targetUrls,
    observer: rec.observer,
    concurrencyLimit: cfg.concurrencyLimit,
    log: cfg.log,
  });
  await subject.addMonitors(n);
  cfg.gc();
  const mem1 = process.memoryUsage();
  await subject.start();
  // Warm-up of at least one whole interval: every monitor has run once (first results write more) before measuring.
  const fromMs = Math.ceil((Date.now() + MIN_MS + 1000) / MIN_MS) * MIN_MS;
  rec.window.fromMs = fromMs;
  rec.window.toMs = fromMs + cfg.minutes * MIN_MS;
  console.log(
    `[${n}] ${n} monitors added; warm-up until ${new Date(fromMs).toISOString()}, then ${cfg.minutes} min measured`,
  );
  await sleep(fromMs - Date.now());
  const profile = await startCpuProfile(n);
  const threads0 = threadCpuMs();
  const c0 = cpuMs();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let maxRssB = 0;
  let maxQueued = 0;
  while (Date.now() < rec.window.toMs) {
    maxRssB = Math.max(maxRssB, process.memoryUsage.rss());
    maxQueued = Math.max(maxQueued, subject.stats().queued);
    await sleep(Math.min(1000, Math.max(1, rec.window.toMs - Date.now())));
  }
  const cpuS = (cpuMs() - c0) / 1000;
  const mainThreadS = ((threadCpuMs().get(process.pid) ?? 0) - (threads0.get(process.pid) ?? 0)) / 1000;
  await profile();
  loop.disable();
  const apiPhase = await measureApiPhase(subject, rec);
  cfg.gc();
  // Heap plus ArrayBuffer memory (history holds each open hour's rows in one buffer per monitor, off the JS heap).
  const memAfter = process.memoryUsage();
  const heapAfterB = memAfter.heapUsed + memAfter.arrayBuffers - mem0.arrayBuffers;
  // Occurrences of the last measured minute still queued run late rather than never: let them start before counting.
  const drainFrom = Date.now();
  while (subject.stats().queued > 0 && Date.now() - drainFrom < MIN_MS) await sleep(250);
  const drainS = (Date.now() - drainFrom) / 1000;
  const stats = subject.stats();
  await subject.stop();
  await subject.close();
  const shares = [...Array(cfg.minutes).keys()].map((i) => (rec.startsByMinute.get(fromMs / MIN_MS + i) ?? 0) / n);
  const lat = rec.hist.summary();
  const out: Record<string, number> = {
    monitors: n,
    checks_per_s: round(rec.completed / (cfg.minutes * 60)),
    checks_per_cpu_s: round(rec.completed / cpuS),
    cpu_share_of_one_core: round(cpuS / (cfg.minutes * 60), 3),
    failed_checks: rec.failed,
    lateness_p50_ms: lat.p50Ms,
    lateness_p99_ms: lat.p99Ms,
    lateness_max_ms: lat.maxMs,
    check_duration_p50_ms: rec.durations.quantile(0.5),
    check_duration_p99_ms: rec.durations.quantile(0.99),
    max_queued: maxQueued,
    due_share_min_pct: round(Math.min(...shares) * 100, 2),
    backlog_drain_s: round(drainS),
    skipped_overlap: stats.skippedOverlap,
    missed: stats.missedCount,
    rss_mb: round(maxRssB / 2 ** 20),
    heap_bytes_per_monitor: Math.round((mem1.heapUsed - mem0.heapUsed) / n),
    rss_bytes_per_monitor: Math.max(0, Math.round((mem1.rss - mem0.rss) / n)),
    event_loop_delay_p99_ms: round(loop.percentile(99) / 1e6),
    main_thread_cpu_share: round(mainThreadS / cpuS, 3),
    heap_and_buffer_bytes_per_monitor_after_run: Math.round((heapAfterB - mem0.heapUsed) / n),
    ...apiPhase,
  };
  console.log(
    `[${n}] per-minute share of due checks that ran: ${shares.map((s) => `${round(s * 100, 2)} %`).join(', ')}`,
  );
  console.log(`[${n}]`, JSON.stringify(out));
  return out;
}

/**
 * The API under the same load, in its own minute after the CPU minutes (BENCH_API_SECONDS, default 60; 0 = skip):
 * the service's work for the API (a 20 MB list, argon2id logins) is not a check's cost, so it is kept out of
 * checks_per_cpu_s and reported here with the checks per CPU-second of this phase (api_phase_checks_per_cpu_s).
 */
async function measureApiPhase(subject: BenchSubject, rec: Recorder): Promise<Record<string, number>> {
  const seconds = Number(process.env.BENCH_API_SECONDS ?? 60);
  if (!subject.startApiProbes || !subject.probeApi || seconds <= 0) return {};
  await subject.startApiProbes();
  const c0 = cpuMs();
  const done0 = rec.allCompleted;
  const until = Date.now() + seconds * 1000;
  const api: Record<string, number[]> = {};
  while (Date.now() < until) {
    for (const [k, v] of Object.entries(await subject.probeApi())) (api[k] ??= []).push(v);
    await sleep(Math.min(1000, Math.max(1, until - Date.now())));
  }
  const out: Record<string, number> = {
    api_phase_checks_per_cpu_s: round((rec.allCompleted - done0) / ((cpuMs() - c0) / 1000)),
  };
  for (const [k, v] of Object.entries(api))
    out[`api_${k}_p99_ms`] = round(v.sort((a, b) => a - b)[Math.floor(v.length * 0.99)] ?? 0);
  return out;
}

async function measureRestart(cfg: BenchConfig, n: number): Promise<Record<string, number>> {
  const rec = createRecorder(true);
  const subject = await cfg.makeSubject({
    targetUrls: cfg.targetUrls,
    observer: rec.observer,
    concurrencyLimit: cfg.concurrencyLimit,
    log: cfg.log,
  });
  await subject.addMonitors(n);
  const t0 = Date.now();
  await subject.start();
  while (rec.firstStart.size < n && Date.now() - t0 < 2 * MIN_MS) await sleep(200);
  const lastFirst = Math.max(...rec.firstStart.values());
  await subject.stop();
  await subject.close();
  const out = {
    restart_monitors: n,
    restart_all_ran_s: round((lastFirst - t0) / 1000),
    restart_ran_pct: round((rec.firstStart.size / n) * 100, 2),
  };
  console.log('[restart]', JSON.stringify(out));
  return out;
}

export async function runSchedulerBench(
  opts: { makeSubject?: MakeSubject; sizes?: number[]; minutes?: number; restartSize?: number } = {},
): Promise<Record<string, number>> {
  const env = process.env;
  const mode = env.BENCH_RUN === 'noop' ? 'noop' : 'http';
  const minutes = opts.minutes ?? Math.max(1, Number(env.BENCH_MINUTES ?? 3));
  const sizes = opts.sizes ?? (env.BENCH_SIZES ?? '10000,50000').split(',').map(Number);
  const restartSize = opts.restartSize ?? Number(env.BENCH_RESTART_SIZE ?? 10_000);
  const target = await startTarget();
  const cfg: BenchConfig = {
    makeSubject:
      opts.makeSubject ??
      makeBareSubject(mode, {
        batchMs: optNumber(env.BENCH_BATCH_MS),
        spreadFraction: optNumber(env.BENCH_SPREAD_FRACTION),
      }),
    targetUrls: target.urls,
    minutes,
    concurrencyLimit: Number(env.BENCH_CONCURRENCY ?? 500),
    log: pino({ level: 'warn' }),
    gc: gcNow(),
  };
  try {
    console.log(
      `scheduler bench: run=${opts.makeSubject ? 'custom subject' : mode}, sizes ${sizes.join(', ')}, ${minutes} min each, target in child pid ${target.child.pid}`,
    );
    await bareGetLoop(target.urls, 2000); // warm-up
    const baseline = await bareGetLoop(target.urls, 20_000);
    console.log(
      `[baseline] bare fresh-connection node:http GET loop: ${baseline.checksPerS} checks/s, ${baseline.checksPerCpuS} checks per CPU-second`,
    );
    const figures: Record<string, number> = {
      baseline_checks_per_s: baseline.checksPerS,
      baseline_checks_per_cpu_s: baseline.checksPerCpuS,
    };
    let last: Record<string, number> = {};
    for (const n of sizes) {
      last = await measureSize(cfg, n);
      for (const [k, v] of Object.entries(last)) if (k !== 'monitors') figures[`n${n}_${k}`] = v;
      if (n === restartSize) Object.assign(figures, await measureRestart(cfg, n));
    }
    if (restartSize > 0 && !sizes.includes(restartSize)) Object.assign(figures, await measureRestart(cfg, restartSize));
    Object.assign(figures, {
      monitors: last.monitors,
      checks_per_s: last.checks_per_s,
      checks_per_cpu_s: last.checks_per_cpu_s,
      ratio_vs_bare_loop: round(last.checks_per_cpu_s! / baseline.checksPerCpuS, 3),
      lateness_p50_ms: last.lateness_p50_ms,
      lateness_p99_ms: last.lateness_p99_ms,
      lateness_max_ms: last.lateness_max_ms,
      due_share_min_pct: Math.min(...sizes.map((n) => figures[`n${n}_due_share_min_pct`] ?? 0)),
      heap_bytes_per_monitor: last.heap_bytes_per_monitor,
      rss_mb: last.rss_mb,
    });
    return figures;
  } finally {
    target.child.stdin?.end();
    target.child.kill();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runSchedulerBench().then(
    (figures) => {
      console.log(JSON.stringify(figures));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
