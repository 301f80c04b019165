/**
 * npm run bench:protocols — protocol check costs against real loopback peers (.ci/start-peers.sh starts them).
 *  1. 2,000 ping monitors due in the same minute: fping batches (pingType.checkBatch) vs one `ping` process per
 *     check, same targets (127.x), same 3 echoes. CPU = this process + reaped children (/proc/self/stat).
 *  2. DNS: nslookup checks at 1,000/s against dnsmasq.
 *  3. SNMP: snmp v2c GETs at 500/s against snmpd (and v3 authPriv SHA/AES at the same rate).
 * Prints throughput, CPU and p99 latency for each; the last line is one JSON object.
 * Env: BENCH_PING_N (2000), BENCH_SECONDS (10), BENCH_PING_PARALLEL (64, baseline processes at a time),
 * BENCH_ONLY (comma list of ping,dns,snmp; default all).
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import pino from 'pino';
import { pingType } from '../src/monitor/monitor-types/ping.js';
import { nslookupType } from '../src/monitor/monitor-types/nslookup.js';
import { snmpType } from '../src/monitor/monitor-types/snmp.js';
import type { CheckContext, CheckResult, MonitorConfig } from '../src/monitor/monitor-types/types.js';

const PING_N = Number(process.env.BENCH_PING_N ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PING_PARALLEL = Number(process.env.BENCH_PING_PARALLEL ?? 64);
const CLK_TCK = 100;
const ONLY = new Set((process.env.BENCH_ONLY ?? 'ping,dns,snmp').split(','));
const NONE = { up: 0, ok: 0, sent: 0, wallMs: 0, cpuMs: 0, p99Ms: 0, perSec: 0, cpuPct: 0, cpuMsPerCheck: 0 };

function cpuMs(): number {
  const own = process.cpuUsage();
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  const children = ((Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK; // cutime + cstime
  return (own.user + own.system) / 1000 + children;
}

const silent = pino({ level: 'silent' });
function ctx(timeoutMs: number): CheckContext & { dispose(): void } {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  return {
    signal: ac.signal,
    deadlineMs: Date.now() + timeoutMs,
    timeoutMs,
    now: () => Date.now(),
    log: silent,
    policy: { denies: () => undefined },
    secrets: { get: async () => undefined },
    settings: { get: () => undefined },
    dispose: () => clearTimeout(timer),
  };
}

function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] ?? 0) * 100) / 100;
}

const targets = Array.from({ length: PING_N }, (_, i) => `127.${1 + Math.floor(i / 250)}.${i % 250}.1`);

async function pingBatch() {
  const configs: MonitorConfig[] = targets.map((ip, i) => ({ name: `p${i}`, ip }));
  const c0 = cpuMs();
  const t0 = performance.now();
  const c = ctx(10_000);
  const rs = await pingType.checkBatch!(configs, c);
  c.dispose();
  const wallMs = performance.now() - t0;
  const cpu = cpuMs() - c0;
  return { up: rs.filter((r) => r.outcome === 'up').length, wallMs, cpuMs: cpu, p99Ms: wallMs };
}

function onePing(ip: string): Promise<boolean> {
  return new Promise((resolve) => {
    const p = spawn('ping', ['-n', '-q', '-c', '3', '-i', '0.2', '-W', '1', ip], { stdio: 'ignore' });
    p.on('close', (code) => resolve(code === 0));
    p.on('error', () => resolve(false));
  });
}

async function pingPerProcess() {
  const c0 = cpuMs();
  const t0 = performance.now();
  const lat: number[] = [];
  let up = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < targets.length) {
      const ip = targets[next++]!;
      const s = performance.now();
      if (await onePing(ip)) up++;
      lat.push(performance.now() - t0); // completion time since the minute's start, as for the batch
      void s;
    }
  };
  await Promise.all(Array.from({ length: PING_PARALLEL }, worker));
  const wallMs = performance.now() - t0;
  return { up, wallMs, cpuMs: cpuMs() - c0, p99Ms: p99(lat) };
}

/** Fires `rate` checks per second for SECONDS, each a fresh check() call; returns throughput, CPU, p99. */
async function paced(rate: number, run: () => Promise<CheckResult>) {
  const total = rate * SECONDS;
  const lat: number[] = [];
  let ok = 0;
  const pending: Promise<void>[] = [];
  const c0 = cpuMs();
  const t0 = performance.now();
  const tickMs = 10;
  const perTick = rate / (1000 / tickMs);
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / tickMs + 1) * perTick));
    for (; sent < due; sent++) {
      const s = performance.now();
      pending.push(
        run().then((r) => {
          lat.push(performance.now() - s);
          if (r.outcome === 'up') ok++;
        }),
      );
    }
    await new Promise((r) => setTimeout(r, tickMs));
  }
  await Promise.all(pending);
  const wallMs = performance.now() - t0;
  const cpu = cpuMs() - c0;
  return {
    sent: total,
    ok,
    perSec: Math.round((total / wallMs) * 1000),
    cpuPct: Math.round((cpu / wallMs) * 1000) / 10,
    cpuMsPerCheck: Math.round((cpu / total) * 1000) / 1000,
    p99Ms: p99(lat),
  };
}

async function main(): Promise<void> {
  await promisify(execFile)('bash', ['.ci/start-peers.sh', 'snmpd']).catch((e) => console.error(String(e)));
  await promisify(execFile)('bash', ['.ci/start-peers.sh', 'dnsmasq']).catch((e) => console.error(String(e)));

  console.log(`ping: ${PING_N} monitors due together (3 echoes each, loopback 127.x targets)`);
  const batch = ONLY.has('ping') ? await pingBatch() : NONE;
  console.log(
    `  fping batches:     ${batch.up}/${PING_N} up, wall ${Math.round(batch.wallMs)} ms, CPU ${Math.round(batch.cpuMs)} ms (${(batch.cpuMs / PING_N).toFixed(3)} ms/check), p99 ${Math.round(batch.p99Ms)} ms`,
  );
  const per = ONLY.has('ping') ? await pingPerProcess() : NONE;
  console.log(
    `  ping per check:    ${per.up}/${PING_N} up, wall ${Math.round(per.wallMs)} ms, CPU ${Math.round(per.cpuMs)} ms (${(per.cpuMs / PING_N).toFixed(3)} ms/check), p99 ${Math.round(per.p99Ms)} ms (${PING_PARALLEL} at a time)`,
  );
  const cpuRatio = Math.round((per.cpuMs / Math.max(1, batch.cpuMs)) * 10) / 10;
  console.log(`  batch is ${cpuRatio}x cheaper in CPU (target >= 10x)`);

  const dnsCfg: MonitorConfig = {
    name: 'dns',
    domain: 'www.lab.test',
    recordType: 'A',
    expectedValue: '127.0.0.10',
    dnsServer: '127.0.0.1:15353',
  };
  console.log(`dns: 1000 lookups/s for ${SECONDS} s against dnsmasq`);
  const dnsRes = !ONLY.has('dns')
    ? NONE
    : await paced(1000, async () => {
        const c = ctx(2000);
        try {
          return await nslookupType.check(dnsCfg, c);
        } finally {
          c.dispose();
        }
      });
  console.log(
    `  ${dnsRes.ok}/${dnsRes.sent} ok, ${dnsRes.perSec}/s, CPU ${dnsRes.cpuPct}% of a core (${dnsRes.cpuMsPerCheck} ms/lookup), p99 ${dnsRes.p99Ms} ms`,
  );

  const v2: MonitorConfig = {
    name: 's',
    ip: '127.0.0.1',
    port: '16161',
    version: 'v2c',
    community: 'lab-public',
    snmpOid: '1.3.6.1.2.1.1.7.0',
  };
  const v3: MonitorConfig = {
    ...v2,
    version: 'v3',
    community: '',
    v3Username: 'mon-sha-aes',
    v3SecurityLevel: 'authPriv',
    v3AuthProtocol: 'SHA',
    v3AuthPassword: 'authpass123',
    v3PrivProtocol: 'AES',
    v3PrivPassword: 'privpass123',
  };
  const snmpRuns: Record<string, Awaited<ReturnType<typeof paced>>> = {};
  for (const [name, cfg] of [
    ['v2c', v2],
    ['v3 authPriv SHA/AES', v3],
  ] as const) {
    console.log(`snmp ${name}: 500 GETs/s for ${SECONDS} s against snmpd`);
    const r = !ONLY.has('snmp')
      ? NONE
      : await paced(500, async () => {
          const c = ctx(2000);
          try {
            return await snmpType.check(cfg, c);
          } finally {
            c.dispose();
          }
        });
    snmpRuns[name] = r;
    console.log(
      `  ${r.ok}/${r.sent} ok, ${r.perSec}/s, CPU ${r.cpuPct}% of a core (${r.cpuMsPerCheck} ms/GET), p99 ${r.p99Ms} ms`,
    );
  }
  const s2 = snmpRuns['v2c']!;
  const s3 = snmpRuns['v3 authPriv SHA/AES']!;
  console.log(
    JSON.stringify({
      pingMonitors: PING_N,
      pingBatchUp: batch.up,
      pingBatchWallMs: Math.round(batch.wallMs),
      pingBatchCpuMs: Math.round(batch.cpuMs),
      pingBatchP99Ms: Math.round(batch.p99Ms),
      pingPerProcessUp: per.up,
      pingPerProcessWallMs: Math.round(per.wallMs),
      pingPerProcessCpuMs: Math.round(per.cpuMs),
      pingPerProcessP99Ms: Math.round(per.p99Ms),
      pingCpuRatioX: cpuRatio,
      dnsTargetPerSec: 1000,
      dnsPerSec: dnsRes.perSec,
      dnsOk: dnsRes.ok,
      dnsSent: dnsRes.sent,
      dnsCpuPct: dnsRes.cpuPct,
      dnsCpuMsPerLookup: dnsRes.cpuMsPerCheck,
      dnsP99Ms: dnsRes.p99Ms,
      snmpTargetPerSec: 500,
      snmpV2cPerSec: s2.perSec,
      snmpV2cOk: s2.ok,
      snmpV2cSent: s2.sent,
      snmpV2cCpuPct: s2.cpuPct,
      snmpV2cCpuMsPerGet: s2.cpuMsPerCheck,
      snmpV2cP99Ms: s2.p99Ms,
      snmpV3PerSec: s3.perSec,
      snmpV3Ok: s3.ok,
      snmpV3Sent: s3.sent,
      snmpV3CpuPct: s3.cpuPct,
      snmpV3CpuMsPerGet: s3.cpuMsPerCheck,
      snmpV3P99Ms: s3.p99Ms,
    }),
  );
}

await main();
