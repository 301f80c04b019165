/** Starts a real monitor service on port 0 with a temporary DATA_DIR, and an authenticated admin client. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService, type MonitorService, type MonitorServiceOptions } from '../../src/monitor/service.js';
import { certsFrom, HttpsClient } from './https-client.kit.js';

export const ADMIN_PASSWORD = 'admin-pass-123';

export interface MonitorHarness {
  svc: MonitorService;
  url: string;
  dataDir: string;
  admin: HttpsClient;
  client(): HttpsClient;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

/** Lease timings that settle a test cluster in about a second: a heartbeat every 200 ms, a member gone after 2 s. */
export const FAST_CLUSTER = { heartbeatMs: 200, ttlMs: 2000 };

/** A DATA_DIR holding `from`'s certificates, token key and secret key, as docs/cluster.md says to prepare one. */
export function sharedDataDir(from: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-test-'));
  fs.cpSync(path.join(from, 'certs'), path.join(dir, 'certs'), { recursive: true });
  for (const f of ['monitor-jwt-key.pem', 'monitor-secret.key']) fs.copyFileSync(path.join(from, f), path.join(dir, f));
  return dir;
}

export async function startMonitor(
  opts: { dataDir?: string; env?: Record<string, string>; service?: MonitorServiceOptions } = {},
): Promise<MonitorHarness> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-test-'));
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD,
    ...opts.env,
  });
  const svc = await createMonitorService(cfg, opts.service);
  const url = await svc.start();
  const clients: HttpsClient[] = [];
  const client = () => {
    const c = new HttpsClient(url, certsFrom(cfg.certDir));
    clients.push(c);
    return c;
  };
  const admin = client();
  await admin.login('admin', ADMIN_PASSWORD);
  return {
    svc,
    url,
    dataDir,
    admin,
    client,
    async stop(o = {}) {
      for (const c of clients) c.close();
      await svc.stop();
      if (!o.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until every instance, as every instance's GET /cluster shows it, holds a share of the probe group's 256
 * shards and together they hold all of them: the spread has settled, so a monitor's holder found next stays put.
 * Throws after `boundMs`.
 */
export async function untilShardsSpread(hs: readonly MonitorHarness[], group = '*', boundMs = 20_000): Promise<void> {
  const startMs = Date.now();
  const counts = async (h: MonitorHarness): Promise<number[]> => {
    const members = (await h.admin.request('GET', '/cluster')).body.members as Array<{
      shards: Record<string, number[]>;
    }>;
    return members.map((m) => m.shards[group]?.length ?? 0);
  };
  for (;;) {
    const views = await Promise.all(hs.map(counts));
    const settled = views.every(
      (c) => c.length === hs.length && c.every((n) => n > 0) && c.reduce((s, n) => s + n) === 256,
    );
    if (settled) return;
    if (Date.now() - startMs > boundMs) {
      throw new Error(
        `the '${group}' shards not spread over ${hs.length} members within ${boundMs} ms: ${JSON.stringify(views)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Two instances, INSTANCE 'a' and 'b', on one store (`env.STORE_URL`) with one CA and keys as docs/cluster.md prepares
 * them, returned once both hold a share of the '*' shards as both see it (so a holder found next stays put).
 */
export async function startPair(env: Record<string, string>): Promise<[MonitorHarness, MonitorHarness]> {
  const service = { cluster: FAST_CLUSTER };
  const a = await startMonitor({ env: { ...env, INSTANCE: 'a' }, service });
  const b = await startMonitor({ dataDir: sharedDataDir(a.dataDir), env: { ...env, INSTANCE: 'b' }, service });
  await untilShardsSpread([a, b]);
  return [a, b];
}
