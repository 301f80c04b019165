/**
 * CPU cost of one url check (fresh connection per check: node:http, agent false, timings, capped body, policy lookup,
 * abort wiring) against a bare node:http GET loop doing the same fresh-connection GETs, same run, same local target.
 * The target runs in a child process so only the client's CPU is counted. Phases alternate bare/url twice.
 * Run: npx tsx bench/http-check.ts [phaseSeconds=8] [concurrency=32]
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import pino from 'pino';
import { createNetworkPolicy } from '../src/monitor/monitor-types/lib/network-policy.js';
import type { CheckContext } from '../src/monitor/monitor-types/types.js';
import { urlType } from '../src/monitor/monitor-types/url.js';

const phaseS = Number(process.argv[2] ?? '8');
const concurrency = Number(process.argv[3] ?? '32');

const SERVER = `
const http = require('node:http');
const s = http.createServer((q, r) => { r.setHeader('connection', 'close'); r.setHeader('content-type', 'text/plain'); r.end('hello ok'); });
s.keepAliveTimeout = 0;
s.listen(0, '127.0.0.1', () => process.stdout.write(String(s.address().port) + '\\n'));
`;

function startTarget(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    child.stdout.once('data', (d: Buffer) => resolve({ port: Number(d.toString().trim()), stop: () => child.kill() }));
  });
}

function bareGet(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', reject);
  });
}

const log = pino({ level: 'silent' });
const policy = createNetworkPolicy();

async function urlCheck(url: string): Promise<void> {
  const ac = new AbortController();
  const timeoutMs = 10_000;
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const ctx: CheckContext = {
    signal: ac.signal,
    deadlineMs: Date.now() + timeoutMs,
    timeoutMs,
    now: Date.now,
    log,
    policy,
    secrets: { get: async () => undefined },
    settings: { get: () => undefined },
  };
  try {
    const r = await urlType.check({ name: 'bench', url }, ctx);
    if (r.outcome !== 'up') throw new Error(`check failed: ${r.message}`);
  } finally {
    clearTimeout(timer);
  }
}

async function phase(name: string, one: () => Promise<void>): Promise<{ checks: number; cpuS: number; wallS: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + phaseS * 1000;
  let checks = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < end) {
      await one();
      checks += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const c = process.cpuUsage(cpu0);
  const cpuS = (c.user + c.system) / 1e6;
  const wallS = (performance.now() - t0) / 1000;
  console.log(
    `${name.padEnd(5)} ${checks} checks in ${wallS.toFixed(1)} s wall, ${cpuS.toFixed(2)} CPU-s → ${(checks / cpuS).toFixed(0)} checks/CPU-s, ${(checks / wallS).toFixed(0)} checks/s`,
  );
  return { checks, cpuS, wallS };
}

async function main(): Promise<void> {
  const target = await startTarget();
  const url = `http://127.0.0.1:${target.port}/`;
  try {
    for (let i = 0; i < 300; i++) await urlCheck(url); // warm-up (JIT)
    for (let i = 0; i < 300; i++) await bareGet(target.port);
    const totals = { bare: { checks: 0, cpuS: 0 }, url: { checks: 0, cpuS: 0 } };
    for (let round = 0; round < 2; round++) {
      const b = await phase('bare', () => bareGet(target.port));
      const u = await phase('url', () => urlCheck(url));
      totals.bare.checks += b.checks;
      totals.bare.cpuS += b.cpuS;
      totals.url.checks += u.checks;
      totals.url.cpuS += u.cpuS;
    }
    const checksPerCpuS = totals.url.checks / totals.url.cpuS;
    const bareChecksPerCpuS = totals.bare.checks / totals.bare.cpuS;
    const cpuRatio = bareChecksPerCpuS / checksPerCpuS;
    console.log(`url check costs ${cpuRatio.toFixed(2)}× the CPU of a bare fresh-connection GET (client side only)`);
    console.log(
      JSON.stringify({
        checks_per_cpu_s: Math.round(checksPerCpuS),
        bare_checks_per_cpu_s: Math.round(bareChecksPerCpuS),
        cpu_ratio_url_vs_bare: Number(cpuRatio.toFixed(3)),
        url_cpu_us_per_check: Math.round((totals.url.cpuS / totals.url.checks) * 1e6),
        bare_cpu_us_per_check: Math.round((totals.bare.cpuS / totals.bare.checks) * 1e6),
        phase_s: phaseS,
        concurrency,
      }),
    );
  } finally {
    target.stop();
  }
}

await main();
