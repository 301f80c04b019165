/**
 * npm run bench:start — the compiled services' start and idle memory (issue 15): for each case, spawn
 * `node <the service's flags> --enable-source-maps dist/<service>/main.js` (what `npm start` runs: each build with the
 * flags of its own src/start-all.ts), time spawn → the
 * "listening on" line, then read the process's VmRSS from /proc/<pid>/status after BENCH_IDLE_MS idle; SIGTERM; the
 * median of BENCH_SAMPLES samples (interleaved with the baselines, so load drifts hit every subject alike).
 * Cases: monitor on a DATA_DIR with certificates only (empty store: the admin user is created), monitor on a store
 * holding 10,000 url monitors (to a closed local port; they start running once it listens), agent with certificates
 * only. Baselines in the same run: a bare Node https server (mutual TLS, same flags) and, when BENCH_BASE_REV is
 * set, the same cases on that git revision built in a temporary worktree.
 * Env: BENCH_SAMPLES (5), BENCH_IDLE_MS (10000), BENCH_MONITORS (10000), BENCH_BASE_REV.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { seedUrlMonitors } from '../test/support/seed-monitors.kit.js';
import { serviceFlags } from '../test/support/service-flags.kit.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const MONITORS = Number(process.env.BENCH_MONITORS ?? 10_000);
const BASE_REV = process.env.BENCH_BASE_REV;
const FLAGS = serviceFlags(ROOT);
const ENV_BASE = { HOST: '127.0.0.1', MONITOR_PORT: '0', AGENT_PORT: '0', ADMIN_PASSWORD: 'bench-start-admin-1' };
const BARE_SERVER = `const https = require('node:https'); const fs = require('node:fs'); const c = process.argv[1];
const s = https.createServer({ key: fs.readFileSync(c + '/server-key.pem'), cert: fs.readFileSync(c + '/server.pem'),
  ca: fs.readFileSync(c + '/ca.pem'), requestCert: true, rejectUnauthorized: true }, (q, r) => r.end('pong'));
s.listen(0, '127.0.0.1', () => console.log('bare listening on https://127.0.0.1:' + s.address().port));
process.on('SIGTERM', () => s.close(() => process.exit(0)));`;

interface Sample {
  startMs: number;
  rssMb: number;
}
interface Subject {
  name: string;
  args: string[];
  /** Makes the sample's DATA_DIR. */
  prepare(dir: string): void;
}

const tempDirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-start-tpl-'));
  tempDirs.push(d);
  return d;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function vmRssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : NaN;
}

/** One sample: spawn, wait for the "listening on" line, idle, read VmRSS, SIGTERM and wait for the exit. */
async function sampleOnce(s: Subject): Promise<Sample> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-start-'));
  s.prepare(dir);
  const t0 = performance.now();
  const child = spawn(process.execPath, s.args, {
    env: { ...process.env, ...ENV_BASE, DATA_DIR: dir, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let out = '';
  const startMs = await new Promise<number>((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d.toString();
      if (/listening on/.test(out)) resolve(performance.now() - t0);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`${s.name} exited (${code}) before listening:\n${out}`)));
  });
  await sleep(IDLE_MS);
  const rssMb = vmRssMb(child.pid!);
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(killer);
  fs.rmSync(dir, { recursive: true, force: true });
  return { startMs: Math.round(startMs), rssMb };
}

/** A DATA_DIR made once by the build's monitor: certs/, keys and a store that holds only the admin user. */
async function firstStart(dist: string): Promise<string> {
  const dir = tempDir();
  const flags = serviceFlags(path.dirname(dist));
  const child = spawn(process.execPath, [...flags.monitor, path.join(dist, 'monitor', 'main.js')], {
    env: { ...process.env, ...ENV_BASE, DATA_DIR: dir, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/listening on/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`first start exited (${code})`)));
  });
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return dir;
}

const copyCerts = (tpl: string) => (dir: string) =>
  fs.cpSync(path.join(tpl, 'certs'), path.join(dir, 'certs'), { recursive: true });
const copyAll = (tpl: string) => (dir: string) => fs.cpSync(tpl, dir, { recursive: true });

/** The three cases for one build (dist folder), labelled with `tag`. */
async function subjectsFor(tag: string, dist: string): Promise<Subject[]> {
  const tpl = await firstStart(dist);
  const tpl10k = tempDir();
  fs.cpSync(tpl, tpl10k, { recursive: true });
  // url monitors to a closed local port (they start running once the service listens).
  await seedUrlMonitors(path.join(tpl10k, 'monitor-db'), MONITORS, {
    prefix: 'start',
    url: (j) => `http://127.0.0.1:9/${j}`,
    timeout: '5',
  });
  const flags = serviceFlags(path.dirname(dist));
  const run = (svc: 'monitor' | 'agent') => [...flags[svc], '--enable-source-maps', path.join(dist, svc, 'main.js')];
  return [
    { name: `${tag}_monitor_empty`, args: run('monitor'), prepare: copyCerts(tpl) },
    { name: `${tag}_monitor_${MONITORS}`, args: run('monitor'), prepare: copyAll(tpl10k) },
    { name: `${tag}_agent_empty`, args: run('agent'), prepare: copyCerts(tpl) },
  ];
}

/** BENCH_BASE_REV built in a temporary worktree (node_modules linked from this checkout); its dist folder. */
function buildBase(rev: string): { dist: string; cleanup(): void } {
  const wt = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-start-base-'));
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', wt, rev], { stdio: 'ignore' });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(wt, 'node_modules'));
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: wt, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building ${rev} failed:\n${r.stdout}${r.stderr}`);
  return {
    dist: path.join(wt, 'dist'),
    cleanup: () => execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', wt], { stdio: 'ignore' }),
  };
}

async function main(): Promise<Record<string, number | string>> {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  const base = BASE_REV ? buildBase(BASE_REV) : undefined;
  try {
    const subjects = await subjectsFor('current', path.join(ROOT, 'dist'));
    if (base) subjects.push(...(await subjectsFor('base', base.dist)));
    const tpl = (await firstStart(path.join(ROOT, 'dist'))) + '/certs';
    for (const svc of ['monitor', 'agent'] as const)
      subjects.push({
        name: `bare_https_${svc}_flags`,
        args: [...FLAGS[svc], '-e', BARE_SERVER, tpl],
        prepare: () => undefined,
      });
    const samples = new Map<string, Sample[]>(subjects.map((s) => [s.name, []]));
    for (let i = 0; i < SAMPLES; i++) {
      for (const s of subjects) {
        const x = await sampleOnce(s);
        samples.get(s.name)!.push(x);
        console.log(
          `${s.name} #${i + 1}: start → listening ${x.startMs} ms, RSS after ${IDLE_MS} ms idle ${x.rssMb} MB`,
        );
      }
    }
    const out: Record<string, number | string> = { samples: SAMPLES, idle_ms: IDLE_MS, monitors: MONITORS };
    if (BASE_REV) out.base_rev = BASE_REV;
    out.load_average_1min = Math.round(os.loadavg()[0]! * 10) / 10;
    for (const [name, xs] of samples) {
      out[`${name}_start_to_listening_ms`] = median(xs.map((x) => x.startMs));
      out[`${name}_idle_rss_mb`] = median(xs.map((x) => x.rssMb));
    }
    return out;
  } finally {
    base?.cleanup();
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

main().then(
  (figures) => {
    console.log(JSON.stringify(figures));
    process.exit(0);
  },
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
