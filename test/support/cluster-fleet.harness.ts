/**
 * A cluster of monitor services as real processes, for the cluster proof test (test/e2e/cluster-proof.test.ts) and
 * bench:cluster: start one service process and know its URL, read which member holds which shard lease (and at which
 * epoch) straight from PostgreSQL (PostgreSQL's clock decides what is live), wait for a spread, stop a process only
 * while its main thread waits in the event loop, and judge the runs a recording target saw
 * (test/support/recording-target.fixture.ts) — missed and duplicate runs per monitor, from the gaps between its runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import type { Arrivals } from './recording-target.fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ServiceProcess {
  child: ChildProcess;
  pid: number;
  /** https://127.0.0.1:<port> */
  url: string;
  dataDir: string;
  /** Everything it printed (stdout and stderr). */
  output: () => string;
  /** Whether `member` (a cluster member id, `<host>-<pid>-<random>`) is this process. */
  isMember: (member: string) => boolean;
}

export interface ServiceProcessOptions {
  /** Node arguments: the script and its flags (e.g. ['dist/monitor/main.js']). */
  args: string[];
  env: Record<string, string>;
  /** Default: a new temporary folder, removed when the process exits. */
  dataDir?: string;
  /** How long to wait for "listening on" (default 120 s). */
  startTimeoutMs?: number;
  /** Also append everything it prints to this file (e.g. a bench's `--trace-gc` lines). */
  outputFile?: string;
}

/** Starts one monitor service (port 0, loopback) and resolves once it listens. */
export async function startServiceProcess(o: ServiceProcessOptions): Promise<ServiceProcess> {
  const dataDir = o.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-member-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, MONITOR_PORT: '0', HOST: '127.0.0.1' };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, o.args, {
    env: { ...env, LOG_LEVEL: 'warn', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let url: string | undefined;
  // Opened once (not an open and close per chunk); written synchronously, so nothing is lost if the caller exits.
  const outputFd = o.outputFile ? fs.openSync(o.outputFile, 'a') : undefined;
  if (outputFd !== undefined) child.once('close', () => fs.closeSync(outputFd));
  const seen = (d: Buffer) => {
    if (outputFd !== undefined) fs.writeSync(outputFd, d);
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
    url ??= /listening on (https:\/\/\S+)/.exec(out)?.[1]?.replace('localhost', '127.0.0.1');
  };
  child.stdout.on('data', seen);
  child.stderr.on('data', seen);
  if (!o.dataDir) child.once('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const limitMs = o.startTimeoutMs ?? 120_000;
  for (const t0 = Date.now(); url === undefined; await sleep(100)) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`service exited:\n${out}`);
    if (Date.now() - t0 > limitMs) {
      child.kill('SIGKILL');
      throw new Error(`service not listening within ${limitMs} ms:\n${out}`);
    }
  }
  const pid = child.pid!;
  return { child, pid, url, dataDir, output: () => out, isMember: (id) => id.includes(`-${pid}-`) };
}

export interface ShardLease {
  shard: number;
  owner: string;
  /** Incremented by every change of hands (cluster-store.ts), never by a renewal or a release. */
  epoch: number;
  /** Unexpired on PostgreSQL's clock. */
  live: boolean;
}

/** Every shard row of `group`, live or not, ordered by shard. */
export async function shardLeases(db: pg.Client, group = '*', namespace = 'monitor'): Promise<ShardLease[]> {
  const r = await db.query(
    `SELECT shard, owner, epoch, expires_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint AS live
     FROM cluster_shards_${namespace} WHERE grp = $1 ORDER BY shard`,
    [group],
  );
  return r.rows.map((row) => ({
    shard: row.shard as number,
    owner: row.owner as string,
    epoch: Number(row.epoch),
    live: row.live as boolean,
  }));
}

/** Live holders of the shard leases of `group` (unexpired on PostgreSQL's clock): member id → shards. */
export async function leaseHolders(db: pg.Client, group = '*', namespace = 'monitor'): Promise<Map<string, number[]>> {
  return holdersOf(await shardLeases(db, group, namespace));
}

/** The live holders among `leases`, as leaseHolders gives them: member id → shards. */
export function holdersOf(leases: readonly ShardLease[]): Map<string, number[]> {
  const m = new Map<string, number[]>();
  for (const l of leases) if (l.live) m.set(l.owner, [...(m.get(l.owner) ?? []), l.shard]);
  return m;
}

/** epoll_wait / epoll_pwait / epoll_pwait2 by architecture: what libuv's loop blocks in when idle. */
const EPOLL_SYSCALLS: Partial<Record<string, readonly string[]>> = { x64: ['232', '281', '441'], arm64: ['22', '441'] };

/**
 * SIGSTOPs `pid` at a moment its main thread is blocked in the event loop's epoll (Linux, /proc/<pid>/syscall):
 * then no JavaScript is half way through, so every run that started before the stop has at least called connect()
 * (a url check connects in the same tick it starts). Any other moment: SIGCONT at once and try again a little later.
 * On an architecture not listed it stops at once. Resolves the attempts it took.
 */
export async function stopWhileIdle(pid: number, maxAttempts = 1000): Promise<number> {
  const idle = EPOLL_SYSCALLS[process.arch];
  for (let attempt = 1; ; attempt++) {
    process.kill(pid, 'SIGSTOP');
    if (!idle) return attempt;
    // The stop is asynchronous: wait until the kernel reports the process stopped (state T) before reading.
    for (let i = 0; fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0] !== 'T'; i++) {
      if (i > 10_000) throw new Error(`process ${pid} did not stop`);
      await sleep(1);
    }
    const call = fs.readFileSync(`/proc/${pid}/syscall`, 'latin1').split(' ')[0]!;
    if (idle.includes(call)) return attempt;
    process.kill(pid, 'SIGCONT');
    if (attempt >= maxAttempts) throw new Error(`process ${pid} was never idle when stopped (last: ${call.trim()})`);
    await sleep(1 + (attempt % 7));
  }
}

/** Polls leaseHolders every 100 ms until `ok`; resolves with the ms it took, throws after `timeoutMs`. */
export async function waitForHolders(
  db: pg.Client,
  ok: (holders: Map<string, number[]>) => boolean,
  timeoutMs: number,
  group = '*',
): Promise<number> {
  const t0 = Date.now();
  let last = new Map<string, number[]>();
  while (!ok((last = await leaseHolders(db, group)))) {
    if (Date.now() - t0 > timeoutMs) {
      const counts = [...last].map(([id, s]) => `${id}: ${s.length}`).join(', ');
      throw new Error(`shards of '${group}' not as expected within ${timeoutMs} ms (${counts})`);
    }
    await sleep(100);
  }
  return Date.now() - t0;
}

/** All 256 shards held, by exactly `n` members. */
export const spreadOver =
  (n: number) =>
  (holders: Map<string, number[]>): boolean =>
    holders.size === n && [...holders.values()].reduce((s, l) => s + l.length, 0) === 256;

export interface RunStats {
  /** Runs inside the window. */
  total: number;
  /** Due times with no run: a gap over 1.5 intervals between runs (or from a window edge to the nearest run). */
  missed: number;
  /** Runs closer than half an interval to the previous run of the same monitor. */
  duplicates: number;
  /** The names with a missed or duplicate run (at most 10, for messages). */
  examples: string[];
}

/**
 * Judges the runs of `names` in [fromMs, toMs) by the gaps between consecutive runs: a gap over 1.5 intervals is
 * missed runs (gap/interval − 1, rounded), a gap under half an interval a duplicate. The window's edges count as
 * runs for the missed test, so a monitor that stopped running (or started late) is missed, while a run a little late
 * across an edge is neither; a monitor with no run misses window/interval runs (rounded down).
 */
export function runStats(seen: Arrivals, names: readonly string[], fromMs: number, toMs: number, intervalMs = 60_000) {
  const s: RunStats = { total: 0, missed: 0, duplicates: 0, examples: [] };
  for (const name of names) {
    const times = (seen[name] ?? []).filter((t) => t >= fromMs && t < toMs).sort((a, b) => a - b);
    s.total += times.length;
    if (times.length === 0) {
      s.missed += Math.floor((toMs - fromMs) / intervalMs);
      if (toMs - fromMs >= intervalMs && s.examples.length < 10) s.examples.push(name);
      continue;
    }
    const edges = [fromMs, ...times, toMs];
    let bad = false;
    for (let k = 1; k < edges.length; k++) {
      const gap = edges[k]! - edges[k - 1]!;
      if (gap > 1.5 * intervalMs) {
        s.missed += Math.round(gap / intervalMs) - 1;
        bad = true;
      }
      if (k > 1 && k < edges.length - 1 && gap < intervalMs / 2) {
        s.duplicates += 1;
        bad = true;
      }
    }
    if (bad && s.examples.length < 10) s.examples.push(name);
  }
  return s;
}
