/**
 * bench:agent — a discovery cycle with ≥ 1,000 processes (the bench spawns sleepers) against systeminformation's
 * processes() + networkConnections() in the same run; getProcessByPort p99; the agent's RSS.
 *
 * In process (precise CPU from process.cpuUsage): the real service (createAgentService, port 0) runs cycles through
 * svc.discovery.run(); getProcessByPort is called as a function (the lookup the route calls); systeminformation runs
 * here too (its CPU includes the ps/ss children it waits for, from /proc/self/stat).
 * Child agent (as production starts it: `node [AGENT_NODE_FLAGS] --import tsx src/agent/main.ts`): cycles over
 * HTTPS (GET /runDiscovery; CPU from the child's /proc/<pid>/stat), getProcessByPort over mTLS HTTPS, and its
 * VmRSS / VmHWM. Environment: load average and the size of /proc/net/tcp with the CPU one read of it costs (the
 * kernel generates every line, TIME_WAIT included: on a host with tens of thousands of them that is the floor of a
 * cycle, whoever reads the table).
 * Env: SLEEPERS (1000), CYCLES (10), SI_RUNS (3), LOOKUPS (500), AGENT_NODE_FLAGS (''). Last line: JSON figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { readConfig } from '../src/core/config/env.js';
import { createAgentService } from '../src/agent/service.js';
import { createProcessByPort } from '../src/agent/discovery/process-by-port.js';
import { createProcessSampler } from '../src/core/system/processes.js';
import { createSocketOwnerResolver } from '../src/core/system/sockets.js';
import { certsFrom, HttpsClient } from '../test/support/https-client.kit.js';

const SLEEPERS = Number(process.env.SLEEPERS ?? 1000);
const CYCLES = Number(process.env.CYCLES ?? 10);
const SI_RUNS = Number(process.env.SI_RUNS ?? 3);
const LOOKUPS = Number(process.env.LOOKUPS ?? 500);
const AGENT_NODE_FLAGS = (process.env.AGENT_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/** CPU ms (utime+stime, and with `children` the waited-for children's) of a process from /proc (10 ms ticks). */
function procCpuMs(pid: number | 'self', children = false): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) * 10;
}
function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
function procStatusKB(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function measure(runs: number, fn: () => Promise<unknown>): Promise<{ cpuMs: number; wallMs: number }> {
  const c0 = procCpuMs('self', true);
  const s0 = selfCpuMs();
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await fn();
  const wallMs = (performance.now() - t0) / runs;
  // /proc ticks are 10 ms coarse: the finer process.cpuUsage for our own threads, plus the children's ticks.
  const childMs = Math.max(0, procCpuMs('self', true) - c0 - (selfCpuMs() - s0));
  return { cpuMs: (selfCpuMs() - s0 + childMs) / runs, wallMs };
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const r1 = (n: number): number => Math.round(n * 10) / 10;

function latencies(samples: number[]): { p50: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: r1(pct(s, 50)), p99: r1(pct(s, 99)), max: r1(s[s.length - 1]!) };
}

/** Lines of /proc/net/tcp and the CPU of one full read of it (median of 5). */
function tcpTableCost(): { lines: number; readCpuMs: number } {
  const buf = Buffer.allocUnsafe(1 << 20);
  const costs: number[] = [];
  let lines = 0;
  for (let i = 0; i < 5; i++) {
    const c0 = selfCpuMs();
    const fd = openSync('/proc/net/tcp', 'r');
    lines = 0;
    for (let n = readSync(fd, buf, 0, buf.length, null); n > 0; n = readSync(fd, buf, 0, buf.length, null)) {
      for (let j = buf.indexOf(10); j >= 0 && j < n; j = buf.indexOf(10, j + 1)) lines++;
    }
    closeSync(fd);
    costs.push(selfCpuMs() - c0);
  }
  return { lines: lines - 1, readCpuMs: r1(costs.sort((a, b) => a - b)[2]!) };
}

async function startChildAgent(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...AGENT_NODE_FLAGS, '--import', 'tsx', 'src/agent/main.ts'], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      AGENT_PORT: '0',
      HOST: '127.0.0.1',
      LOG_STDOUT: 'false',
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: 'bench-admin-pw',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (https:\/\/[^\s]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`agent exited ${code}: ${out}`)));
  });
  return { child, url };
}

const sleepers = spawn('sh', ['-c', `i=0; while [ $i -lt ${SLEEPERS} ]; do sleep 900 & i=$((i+1)); done; wait`], {
  stdio: 'ignore',
  detached: true,
});
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-agent-'));
const childDir = mkdtempSync(path.join(os.tmpdir(), 'bench-agent-child-'));
const listener = createServer();
let agentChild: ChildProcess | undefined;
try {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const n = readFileSync(`/proc/${sleepers.pid}/task/${sleepers.pid}/children`, 'utf8').trim().split(/\s+/).length;
    if (n >= SLEEPERS) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const port = (listener.address() as { port: number }).port;
  const env = { loadavg1: r1(os.loadavg()[0]!), cores: os.cpus().length, ...tcpTableCost() };
  console.log(
    `machine: load average ${env.loadavg1} on ${env.cores} cores; /proc/net/tcp has ${env.lines} lines, one read costs ${env.readCpuMs} ms CPU`,
  );

  // In process: cycles, lookups as function calls, systeminformation.
  const cfg = readConfig('agent', {
    DATA_DIR: dataDir,
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: 'bench-admin-pw',
  });
  const svc = await createAgentService(cfg, { schedule: false });
  await svc.start();
  const first = await svc.discovery.run();
  const procCount = first.processes?.length ?? 0;
  await svc.discovery.run();
  const ours = await measure(CYCLES, () => svc.discovery.run());
  const last = svc.discovery.last()!;
  const socketsMs = last.collectors.sockets?.durationMs ?? 0;
  const processesMs = last.collectors.processes?.durationMs ?? 0;
  console.log(
    `in-process cycle: ${procCount} processes, ${r1(ours.cpuMs)} ms CPU, ${r1(ours.wallMs)} ms wall per cycle (${CYCLES} cycles; last: processes ${processesMs} ms, sockets ${socketsMs} ms wall)`,
  );
  await svc.stop();
  const lookup = createProcessByPort({ resolver: createSocketOwnerResolver(), processes: createProcessSampler() });
  const inLat: number[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const t0 = performance.now();
    const r = lookup(port);
    inLat.push(performance.now() - t0);
    if (r.pid !== process.pid) throw new Error(`in-process lookup found ${r.pid}`);
  }
  const inL = latencies(inLat.slice(1));
  console.log(
    `getProcessByPort in process: first ${r1(inLat[0]!)} ms, p50 ${inL.p50} ms, p99 ${inL.p99} ms, max ${inL.max} ms (${LOOKUPS} lookups)`,
  );
  const si = await import('systeminformation');
  await si.processes();
  const base = await measure(SI_RUNS, async () => {
    await si.processes();
    await si.networkConnections();
  });
  const ratio = base.cpuMs / ours.cpuMs;
  console.log(
    `systeminformation processes() + networkConnections(): ${r1(base.cpuMs)} ms CPU, ${r1(base.wallMs)} ms wall per run (${SI_RUNS} runs)`,
  );
  console.log(`agent cycle is ${r1(ratio)}× cheaper in CPU, ${r1(base.wallMs / ours.wallMs)}× faster in wall time`);

  // The agent as production starts it, in its own process.
  const started = await startChildAgent(childDir);
  agentChild = started.child;
  const pid = agentChild.pid!;
  const client = new HttpsClient(started.url, certsFrom(path.join(childDir, 'certs')));
  await client.login('admin', 'bench-admin-pw', '/api/auth');
  for (let i = 0; i < 2; i++) await client.request('GET', '/runDiscovery');
  const cc0 = procCpuMs(pid);
  const ct0 = performance.now();
  for (let i = 0; i < CYCLES; i++) {
    const r = await client.request('GET', '/runDiscovery');
    if (r.status !== 200) throw new Error(`runDiscovery ${r.status}`);
  }
  const childCycleCpuMs = (procCpuMs(pid) - cc0) / CYCLES;
  const childCycleWallMs = (performance.now() - ct0) / CYCLES;
  console.log(
    `child agent cycle over HTTPS: ${r1(childCycleCpuMs)} ms CPU (10 ms ticks), ${r1(childCycleWallMs)} ms wall per cycle`,
  );
  const httpsLat: number[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const t0 = performance.now();
    const r = await client.request('GET', `/getProcessByPort/${port}`);
    httpsLat.push(performance.now() - t0);
    if (r.status !== 200 || (r.body as { pid?: number }).pid !== process.pid)
      throw new Error(`lookup failed: ${r.status} ${r.text}`);
  }
  const hL = latencies(httpsLat.slice(1));
  console.log(
    `getProcessByPort over HTTPS (child agent): first ${r1(httpsLat[0]!)} ms, p50 ${hL.p50} ms, p99 ${hL.p99} ms, max ${hL.max} ms (${LOOKUPS} lookups)`,
  );
  client.close();
  const rssMB = procStatusKB(pid, 'VmRSS') / 1024;
  const hwmMB = procStatusKB(pid, 'VmHWM') / 1024;
  console.log(
    `child agent (node ${[...AGENT_NODE_FLAGS, '--import tsx'].join(' ')}) RSS ${r1(rssMB)} MB, peak ${r1(hwmMB)} MB`,
  );

  const out = {
    processes: procCount,
    cycleCpuMs: r1(ours.cpuMs),
    cycleWallMs: r1(ours.wallMs),
    cycleProcessesWallMs: processesMs,
    cycleSocketsWallMs: socketsMs,
    siCpuMs: r1(base.cpuMs),
    siWallMs: r1(base.wallMs),
    cpuRatioVsSi: r1(ratio),
    childCycleCpuMs: r1(childCycleCpuMs),
    childCycleWallMs: r1(childCycleWallMs),
    portLookupInProcessP50Ms: inL.p50,
    portLookupInProcessP99Ms: inL.p99,
    portLookupHttpsP50Ms: hL.p50,
    portLookupHttpsP99Ms: hL.p99,
    agentRssMB: r1(rssMB),
    agentPeakRssMB: r1(hwmMB),
    agentNodeFlags: AGENT_NODE_FLAGS.join(' '),
    loadavg1: env.loadavg1,
    loadavg1End: r1(os.loadavg()[0]!),
    tcpTableLines: env.lines,
    tcpTableReadCpuMs: env.readCpuMs,
    targetsMet: {
      cycleCpuUnder100Ms: ours.cpuMs < 100,
      atLeast3xCheaper: ratio >= 3,
      p99Under20MsInProcess: inL.p99 < 20,
      p99Under20MsHttps: hL.p99 < 20,
      rssUnder120MB: rssMB < 120,
    },
  };
  console.log(JSON.stringify(out));
} finally {
  listener.close();
  if (agentChild && agentChild.exitCode === null) {
    agentChild.kill('SIGTERM');
    await once(agentChild, 'exit');
  }
  try {
    process.kill(-sleepers.pid!, 'SIGKILL');
  } catch {
    /* already gone */
  }
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(childDir, { recursive: true, force: true });
}
process.exit(0);
