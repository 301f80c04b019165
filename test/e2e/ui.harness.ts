/**
 * A monitor service with the dashboard routes, for the browser tests and bench/ui.ts. Mirrors
 * test/support/monitor.harness.ts, but registers the UI routes before listening (Fastify cannot add routes after).
 * Also: a local HTTP target, and a Chromium launcher with the mTLS client certificate.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService, type MonitorService, type MonitorServiceOptions } from '../../src/monitor/service.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';

export const ADMIN_PASSWORD = 'admin-pass-123';
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

export interface UiHarness {
  svc: MonitorService;
  url: string;
  dataDir: string;
  certDir: string;
  admin: HttpsClient;
  stop(opts?: { keepData?: boolean }): Promise<void>;
}

export async function startUiService(
  opts: { env?: Record<string, string>; dataDir?: string; service?: MonitorServiceOptions } = {},
): Promise<UiHarness> {
  const env = opts.env ?? {};
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ui-e2e-'));
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD,
    ...env,
  });
  const svc = await createMonitorService(cfg, opts.service);
  const url = await svc.start();
  const admin = new HttpsClient(url, certsFrom(cfg.certDir));
  await admin.login('admin', ADMIN_PASSWORD);
  return {
    svc,
    url,
    dataDir,
    certDir: cfg.certDir,
    admin,
    async stop(o = {}) {
      admin.close();
      await svc.stop();
      if (!o.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A plain HTTP target on loopback answering 200 "hello". */
export async function startTarget(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.end('hello from the target'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((r) => server.close(() => r())) };
}

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM);
}

export async function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

export async function newContext(
  browser: Browser,
  h: UiHarness,
  viewport = { width: 1280, height: 860 },
): Promise<BrowserContext> {
  return browser.newContext({
    viewport,
    ignoreHTTPSErrors: true,
    clientCertificates: [
      {
        origin: new URL(h.url).origin,
        certPath: path.join(h.certDir, 'client.pem'),
        keyPath: path.join(h.certDir, 'client-key.pem'),
      },
    ],
  });
}

/** A page of a new context, logged in as admin on the overview; `errors` collects the page's uncaught errors. */
export async function adminPage(browser: Browser, h: UiHarness): Promise<{ page: Page; errors: string[] }> {
  const ctx = await newContext(browser, h);
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${h.url}/`);
  await page.fill('#username', 'admin');
  await page.fill('#password', ADMIN_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForSelector('h1:text("Monitors")');
  return { page, errors };
}
