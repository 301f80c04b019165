/**
 * npm run bench:scheduler — the whole monitor service (schedule + url check + status + history + alert policy +
 * last results) under 10,000 then 50,000 url monitors at 1MIN against a local HTTP target in a child process, then a
 * restart with 10,000 (a service starting on a store that already holds them). Harness, figures and the bare
 * fresh-connection GET baseline: bench/scheduler.ts (`BENCH_SUBJECT=bare` runs the scheduler alone with a bare GET).
 * After the CPU minutes, one more minute under the same load (bench/scheduler.ts measureApiPhase) in which a client in
 * a child process (bench/api-prober.ts: its CPU is not the service's) samples the API every 5 s: GET /monitors (every
 * monitor, the full list, parsed by the client), GET /monitors?type=sys (a filtered list), a page of 100
 * (GET /monitors?offset=1000&limit=100) and POST /login (argon2id). The service's side of those requests counts in
 * that phase's CPU (api_phase_checks_per_cpu_s).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawn, type ChildProcess } from 'node:child_process';
import { readConfig } from '../src/core/config/env.js';
import { createMonitorService, type MonitorService } from '../src/monitor/service.js';
import { seedUrlMonitors } from '../test/support/seed-monitors.kit.js';
import { certsFrom, HttpsClient } from '../test/support/https-client.kit.js';
import { runSchedulerBench, type MakeSubject } from './scheduler.js';

const ADMIN_PASSWORD = 'bench-admin-pass';

/** bench/api-prober.ts in a child process (its CPU is not the service's); resolves once it has logged in. */
function startProber(
  url: string,
  certDir: string,
  onLine: (line: Record<string, number>) => void,
): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./api-prober.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, url, certDir, 'admin', ADMIN_PASSWORD, '5000'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.once('exit', (code) => reject(new Error(`api prober exited (${code})`)));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line === 'ready') resolve(child);
        else onLine(JSON.parse(line) as Record<string, number>);
      }
    });
  });
}

export const makeServiceSubject: MakeSubject = async (ctx) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sched-'));
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD,
  });
  let svc: MonitorService | undefined;
  let client: HttpsClient | undefined;
  let prober: ChildProcess | undefined;
  let serviceUrl: string | undefined;
  const probeLines: Array<Record<string, number>> = [];
  const service = () => {
    if (!svc) throw new Error('addMonitors first');
    return svc;
  };
  return {
    async addMonitors(n) {
      if (cfg.store.driver !== 'lmdb') throw new Error('the bench seeds the embedded store');
      await seedUrlMonitors(cfg.store.path, n, {
        prefix: 'bench',
        url: (j) => ctx.targetUrls[j % ctx.targetUrls.length]!,
        timeout: '10',
        probe: 'bench',
      });
      svc = await createMonitorService(cfg, { schedulerObserver: ctx.observer });
      await svc.platform.app.inject({ method: 'GET', url: '/ping' });
    },
    async start() {
      const s = service();
      const url = await s.start();
      client = new HttpsClient(url, certsFrom(cfg.certDir));
      await client.login('admin', ADMIN_PASSWORD);
      await client.request('POST', '/updateSetting', { body: { concurrencyLimit: String(ctx.concurrencyLimit) } });
      serviceUrl = url;
    },
    stop: () => service().engine.stop(),
    stats: () => service().engine.scheduler.stats(),
    async startApiProbes() {
      prober = await startProber(serviceUrl!, cfg.certDir, (line) => probeLines.push(line));
    },
    probeApi(): Promise<Record<string, number>> {
      const out = probeLines.shift() ?? {};
      return Promise.resolve(out);
    },
    async close() {
      prober?.kill();
      client?.close();
      await svc?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const bare = process.env.BENCH_SUBJECT === 'bare';
  runSchedulerBench(bare ? {} : { makeSubject: makeServiceSubject }).then(
    (figures) => {
      console.log(JSON.stringify(figures));
      process.exit(0);
    },
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
