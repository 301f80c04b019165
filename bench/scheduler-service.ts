/**
 * npm run bench:scheduler — the whole monitor service (schedule + url check + status + history + alert policy +
 * last results) under 10,000 then 50,000 url monitors at 1MIN against a local HTTP target in a child process, then a
 * restart with 10,000 (a service starting on a store that already holds them). Harness, figures and the bare
 * fresh-connection GET baseline: bench/scheduler.ts (`BENCH_SUBJECT=bare` runs the scheduler alone with a bare GET).
 * While under load it samples the API about every 10 s: GET /monitors (every monitor, the full list, parsed by the
 * client), GET /monitors?type=sys (a filtered list), a page of 100 (GET /monitors?offset=1000&limit=100) and
 * POST /login (argon2id).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readConfig } from '../src/core/config/env.js';
import { openStore } from '../src/core/storage/open-store.js';
import { createMonitorService, type MonitorService } from '../src/monitor/service.js';
import type { StoredMonitor } from '../src/monitor/monitors/monitors.repo.js';
import { certsFrom, HttpsClient } from '../test/helpers/https-client.js';
import { runSchedulerBench, type MakeSubject } from './scheduler.js';

const ADMIN_PASSWORD = 'bench-admin-pass';

async function seedMonitors(storePath: string, n: number, urls: string[]): Promise<void> {
  const store = await openStore({ driver: 'lmdb', path: storePath });
  const now = Date.now();
  for (let i = 0; i < n; i += 5000) {
    const ops = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) {
      const m: StoredMonitor = {
        name: `bench-${j}`, type: 'url', createdMs: now, updatedMs: now,
        config: { display_name: `bench ${j}`, sched: '1MIN', state: 'on', probe: 'bench', url: urls[j % urls.length]!, timeout: '10' },
      };
      ops.push({ type: 'put' as const, bucket: 'monitors', key: m.name, value: m });
    }
    await store.batch(ops);
  }
  await store.close();
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export const makeServiceSubject: MakeSubject = async (ctx) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sched-'));
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir, MONITOR_PORT: '0', HOST: '127.0.0.1', LOG_STDOUT: 'false', LOG_LEVEL: 'warn', ADMIN_PASSWORD,
  });
  let svc: MonitorService | undefined;
  let client: HttpsClient | undefined;
  let probeCalls = 0;
  const service = () => {
    if (!svc) throw new Error('addMonitors first');
    return svc;
  };
  return {
    async addMonitors(n) {
      if (cfg.store.driver !== 'lmdb') throw new Error('the bench seeds the embedded store');
      await seedMonitors(cfg.store.path, n, ctx.targetUrls);
      svc = await createMonitorService(cfg, { schedulerObserver: ctx.observer });
      await svc.platform.app.inject({ method: 'GET', url: '/ping' });
    },
    async start() {
      const s = service();
      const url = await s.start();
      client = new HttpsClient(url, certsFrom(cfg.certDir));
      await client.login('admin', ADMIN_PASSWORD);
      await client.request('POST', '/updateSetting', { body: { concurrencyLimit: String(ctx.concurrencyLimit) } });
    },
    stop: () => service().engine.stop(),
    stats: () => service().engine.scheduler.stats(),
    async probeApi(): Promise<Record<string, number>> {
      // Sampled every 10th call (about every 10 s): the probes' own CPU (argon2id logins above all) counts in the
      // service's CPU, so probing every second would distort checks per CPU-second.
      if (++probeCalls % 10 !== 0) return {};
      const c = client!;
      return {
        monitors_list: await timed(() => c.request('GET', '/monitors')),
        monitors_filtered: await timed(() => c.request('GET', '/monitors?type=sys')),
        monitors_page: await timed(() => c.request('GET', '/monitors?offset=1000&limit=100')),
        login: await timed(() => c.request('POST', '/login', { body: { username: 'admin', password: ADMIN_PASSWORD }, token: null })),
      };
    },
    async close() {
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
