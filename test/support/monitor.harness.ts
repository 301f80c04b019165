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
