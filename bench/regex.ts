/**
 * npm run bench:regex — /ping latency of the real monitor service (a child process, the `monitor` script's flags)
 * while 50 monitors with evil patterns run back to back against evil inputs, vs the same service idle and vs the same
 * 50 fetches without a pattern (what handling the 1 MiB bodies alone costs), all measured in this run. The patterns
 * are catastrophic for a backtracking engine or slow for RE2 (captures over a 1 MiB match, which meet the 1,000 ms
 * bound): url (x+x+)+y on 1 MiB of x, api ^(a+)+$ on 1 MiB of a + '!', api (.*x){20} with matchIndex on 1 MiB of x,
 * url (\w+\s?)*$ on words + '!', api (?<v>(x|xx)+)y. Targets are served by a second child process on loopback.
 * BENCH_PHASE_MS (15000) per phase; one /ping every 20 ms on its own keep-alive connection; the service's own
 * event-loop delay (monitorEventLoopDelay) is read over IPC per phase. BENCH_KINDS=0,2 keeps some kinds only;
 * BENCH_CPU_PROF=1 profiles the service child into $TMPDIR.
 * Last line: {"idle_ping_p50_ms":…, "attack_ping_p99_ms":…, "attack_service_loop_delay_p99_ms":…, …}.
 * Target: attack /ping p99 < 50 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { certsFrom, HttpsClient } from '../test/support/https-client.kit.js';

const SELF = fileURLToPath(import.meta.url);
const PW = 'bench-admin-pass-1';
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 15_000);
const MONITORS = 50;

async function serveMonitor(dataDir: string): Promise<void> {
  const { readConfig } = await import('../src/core/config/env.js');
  const { createMonitorService } = await import('../src/monitor/service.js');
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: PW,
  });
  const svc = await createMonitorService(cfg);
  const url = await svc.start();
  // The service's own event-loop delay, reset and read by the bench between phases (IPC).
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on('message', (m) => {
    if (m === 'reset') loop.reset();
    else if (m === 'report') {
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      process.send!({ p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) });
    }
  });
  process.on('SIGTERM', () => void svc.stop().finally(() => process.exit(0)));
  console.log(JSON.stringify({ url }));
}

function serveTargets(): void {
  const target = http.createServer((req, res) => {
    const body = BODIES[req.url ?? ''] ?? Buffer.from('ok');
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length }).end(body);
  });
  target.listen(0, '127.0.0.1', () =>
    console.log(JSON.stringify({ url: `http://127.0.0.1:${(target.address() as AddressInfo).port}` })),
  );
  process.on('SIGTERM', () => process.exit(0));
}

type LoopDelay = { p50: number; p99: number; max: number };

function loopDelay(child: ChildProcess, cmd: 'reset' | 'report'): Promise<LoopDelay | undefined> {
  child.send(cmd);
  if (cmd === 'reset') return Promise.resolve(undefined);
  return new Promise((r) => child.once('message', (m) => r(m as LoopDelay)));
}

function startChild(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const prof = process.env.BENCH_CPU_PROF && args[0] === 'serve' ? ['--cpu-prof', '--cpu-prof-dir', os.tmpdir()] : [];
  // The service child runs with the `monitor` script's flags.
  const flags = args[0] === 'serve' ? ['--max-semi-space-size=32', ...prof] : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', SELF, ...args], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.on('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
  });
}

const MiB = 1 << 20;
const BODIES: Record<string, Buffer> = {
  '/x': Buffer.alloc(MiB, 'x'),
  '/a': Buffer.concat([Buffer.alloc(MiB - 1, 'a'), Buffer.from('!')]),
  '/words': Buffer.from('ab '.repeat(MiB / 3 - 1) + '!'),
};

function patterns(base: string): Record<string, string>[] {
  // BENCH_KINDS=0,2 keeps only those kinds (diagnosis).
  const kinds: Record<string, string>[] = [
    { type: 'url', url: `${base}/x`, pattern: '(x+x+)+y' },
    { type: 'api', api: `${base}/a`, typeApi: 'GET', pattern: '^(a+)+$' },
    { type: 'api', api: `${base}/x`, typeApi: 'GET', pattern: '(.*x){20}', matchIndex: '1' },
    { type: 'url', url: `${base}/words`, pattern: '(\\w+\\s?)*$' },
    { type: 'api', api: `${base}/x`, typeApi: 'GET', pattern: '(?<v>(x|xx)+)y', matchGroupName: 'v' },
  ];
  const only = process.env.BENCH_KINDS?.split(',').map(Number);
  const use = only ? kinds.filter((_, i) => only.includes(i)) : kinds;
  return Array.from({ length: MONITORS }, (_, i) => ({ ...use[i % use.length]!, name: `evil-${i}` }));
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 10) / 10 : NaN;
};

async function pingPhase(client: HttpsClient, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const t0 = performance.now();
    const r = await client.request('GET', '/ping', { token: null });
    if (r.status !== 200) throw new Error(`/ping ${r.status}`);
    out.push(performance.now() - t0);
    await sleep(20);
  }
  return out;
}

/** Each monitor re-runs as soon as its run ends, for PHASE_MS, while /ping is timed on its own connection. */
async function loadPhase(admin: HttpsClient, pinger: HttpsClient, child: ChildProcess, names: string[]) {
  let stop = false;
  let runs = 0;
  const verdicts: Record<string, number> = {};
  const loops = names.map(async (name) => {
    while (!stop) {
      const r = await admin.request('GET', `/monitor/run/${name}/show`);
      const body = r.body as { message?: string; status?: string } | undefined;
      const msg = String(body?.message ?? '').replace(/'[^']*'/g, "'…'");
      const key = `${body?.status ?? r.status}: ${msg.slice(0, 60)}`;
      verdicts[key] = (verdicts[key] ?? 0) + 1;
      runs++;
    }
  });
  await sleep(500);
  await loopDelay(child, 'reset');
  const t0 = Date.now();
  const startRuns = runs;
  const pings = await pingPhase(pinger, PHASE_MS);
  const loop = (await loopDelay(child, 'report'))!;
  const runsPerS = Math.round(((runs - startRuns) / (Date.now() - t0)) * 10_000) / 10;
  stop = true;
  await Promise.all(loops);
  return { pings, loop, runsPerS, verdicts };
}

async function main(): Promise<void> {
  const target = await startChild(['targets']);
  const base = target.url;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-regex-'));
  const { child, url } = await startChild(['serve', dataDir]);
  try {
    const admin = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
    const pinger = new HttpsClient(url, certsFrom(path.join(dataDir, 'certs')));
    await admin.login('admin', PW);
    for (const { type, ...m } of patterns(base)) {
      m.display_name = m.name!;
      const body: Record<string, string> = { ...m, sched: '60MIN', state: 'off', probe: 'p1', timeout: '30' };
      const plain = Object.fromEntries(Object.entries(body).filter(([k]) => !/^(pattern|match)/.test(k)));
      for (const b of [body, { ...plain, name: `plain-${m.name}` }]) {
        const r = await admin.request('POST', `/${type}/create`, { body: b });
        if (r.status !== 201) throw new Error(`create ${b.name}: ${r.status} ${r.text}`);
      }
    }
    await pingPhase(pinger, 1_000); // warm-up
    await loopDelay(child, 'reset');
    const idle = await pingPhase(pinger, PHASE_MS);
    const idleLoop = (await loopDelay(child, 'report'))!;
    // The same fetches without a pattern (what the 1 MiB bodies cost), then with the evil patterns.
    const bodies = await loadPhase(
      admin,
      pinger,
      child,
      patterns(base).map((m) => `plain-${m.name}`),
    );
    const evil = await loadPhase(
      admin,
      pinger,
      child,
      patterns(base).map((m) => m.name!),
    );
    const fig = {
      idle_ping_p50_ms: pct(idle, 50),
      idle_ping_p99_ms: pct(idle, 99),
      idle_service_loop_delay_p99_ms: idleLoop.p99,
      bodies_ping_p50_ms: pct(bodies.pings, 50),
      bodies_ping_p99_ms: pct(bodies.pings, 99),
      bodies_service_loop_delay_p99_ms: bodies.loop.p99,
      bodies_runs_per_s: bodies.runsPerS,
      attack_ping_p50_ms: pct(evil.pings, 50),
      attack_ping_p99_ms: pct(evil.pings, 99),
      attack_ping_max_ms: pct(evil.pings, 100),
      attack_service_loop_delay_p99_ms: evil.loop.p99,
      attack_service_loop_delay_max_ms: evil.loop.max,
      attack_runs_per_s: evil.runsPerS,
      evil_monitors: MONITORS,
      phase_ms: PHASE_MS,
      target_attack_ping_p99_ms: 50,
      load_avg_1m: Math.round(os.loadavg()[0]! * 10) / 10,
    };
    console.log('evil verdicts (count by status: message):');
    for (const [k, n] of Object.entries(evil.verdicts).sort()) console.log(`  ${n}\t${k}`);
    console.log(`/ping idle: p50 ${fig.idle_ping_p50_ms} ms p99 ${fig.idle_ping_p99_ms} ms (${idle.length} pings)`);
    for (const [label, ph] of [
      ['same fetches, no pattern', bodies],
      [`${MONITORS} evil patterns`, evil],
    ] as const) {
      console.log(
        `/ping under ${label}: p50 ${pct(ph.pings, 50)} ms p99 ${pct(ph.pings, 99)} ms max ${pct(ph.pings, 100)} ms ` +
          `(${ph.pings.length} pings, ${ph.runsPerS} runs/s); service loop delay p99 ${ph.loop.p99} ms max ${ph.loop.max} ms`,
      );
    }
    console.log(JSON.stringify(fig));
    admin.close();
    pinger.close();
  } finally {
    child.kill('SIGTERM');
    target.child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') void serveMonitor(process.argv[3]!);
else if (process.argv[2] === 'targets') serveTargets();
else await main();
