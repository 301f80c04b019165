// Ad-hoc: fixed CPU per second with every monitor paused. Not in the repo.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startServiceProcess, waitForHolders, spreadOver, type ServiceProcess } from '../test/support/cluster-fleet.harness.js';
import { seedUrlMonitors } from '../test/support/seed-monitors.kit.js';
const ROOT = '/work/main';
const N = Number(process.env.N ?? 50000);
const SETTLE = Number(process.env.SETTLE ?? 40), WIN = Number(process.env.WIN ?? 60);
const MODE = process.env.MODE ?? 'both';
const FLAGS = (process.env.FLAGS ?? '').split(' ').filter(Boolean);
const PROF = process.env.PROF; // dir
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function threads(pid: number) {
  const t = { main: 0, other: 0, wake: 0 };
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const raw = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = raw.slice(raw.lastIndexOf(') ') + 2).split(' ');
      const v = Number(f[11]) + Number(f[12]);
      if (tid === String(pid)) t.main += v; else t.other += v;
    } catch {}
  }
  t.wake = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
  return t;
}
async function start(env: Record<string, string>, label: string, dataDir?: string) {
  const hook = PROF ? ['--import', path.join(ROOT, 'bench/cpu-profile-hook.ts')] : [];
  return startServiceProcess({ args: ['--max-semi-space-size=32', ...FLAGS, '--import', 'tsx', ...hook, path.join(ROOT, 'src/monitor/main.ts')],
    env: { BENCH_PROFILE_LABEL: label, BENCH_CPU_PROFILE: PROF ?? '', BENCH_PROFILE_INTERVAL_US: '5000', ...env }, dataDir, outputFile: process.env.OUT ? `${process.env.OUT}/${label}.log` : undefined });
}
async function measure(label: string, ps: ServiceProcess[]) {
  await sleep(SETTLE * 1000);
  const a = ps.map((p) => threads(p.pid));
  if (PROF) for (const p of ps) process.kill(p.pid, 'SIGUSR2');
  await sleep(WIN * 1000);
  if (PROF) for (const p of ps) process.kill(p.pid, 'SIGUSR2');
  const b = ps.map((p) => threads(p.pid));
  ps.forEach((p, i) => console.log(label, i, 'main ms/s', ((b[i].main - a[i].main) * 10 / WIN).toFixed(1), 'other ms/s', ((b[i].other - a[i].other) * 10 / WIN).toFixed(1), 'wakeups/s', ((b[i].wake - a[i].wake) / WIN).toFixed(1)));
  if (PROF) await sleep(3000);
}
const url = (j: number) => `http://127.0.0.1:9/${j}`;
if (MODE !== 'cluster') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-lmdb-'));
  await seedUrlMonitors({ driver: 'lmdb', path: path.join(dataDir, 'monitor-db') }, N, { prefix: 'b', url, timeout: '10', probe: 'default', extra: { state: 'off' } as never });
  const p = await start({}, 'lmdb', dataDir);
  await measure('lmdb', [p]);
  p.child.kill('SIGKILL'); await sleep(500); fs.rmSync(dataDir, { recursive: true, force: true });
}
if (MODE !== 'lmdb') {
  const dbName = `probe_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
  await admin.connect(); await admin.query(`CREATE DATABASE ${dbName}`);
  const u = `postgres://postgres@127.0.0.1:5432/${dbName}`;
  const db = new pg.Client({ connectionString: u }); await db.connect();
  await seedUrlMonitors({ driver: 'postgres', url: u, namespace: 'monitor' }, N, { prefix: 'b', url, timeout: '10', probe: 'default', extra: { state: 'off' } as never });
  const env = { STORE_URL: u, PROBE: 'bench', ADMIN_PASSWORD: 'bench-admin-pass' };
  const ms: ServiceProcess[] = [];
  for (let i = 0; i < 3; i++) ms.push(await start(env, `m${i}`));
  await waitForHolders(db, spreadOver(3), 120000);
  await measure('member', ms);
  for (const m of ms) m.child.kill('SIGKILL');
  await db.end(); await sleep(1000);
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`); await admin.end();
}
process.exit(0);
