/**
 * Every METHOD + PATH of both specs is registered on its service, exactly as the spec spells it
 * (../shared/spec/001_… for the monitor service, 000_… for the discovery agent), and each is in the OpenAPI document.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { readConfig } from '../../src/core/config/env.js';
import { createMonitorService } from '../../src/monitor/service.js';
import { createAgentService } from '../../src/agent/service.js';
import { openApiDocument } from '../../src/core/http/docs.js';

const TYPES = ['url', 'api', 'tcp', 'ping', 'nslookup', 'snmp', 'db', 'sys'];
const MONITOR_ROUTES = [
  'POST /login',
  'POST /loginComponent',
  'POST /loginComponent1Year',
  'POST /loginComponent15Years',
  'GET /refresh_token',
  'GET /monitors',
  'POST /getMonitorDetails',
  'GET /monitor/run/{title}/{show}',
  'POST /exec/enable/{sched}/{name}',
  'POST /exec/disable/{sched}/{name}',
  'DELETE /delete/exec/{sched}/{name}',
  'POST /url/update/{sched}/{name}',
  ...TYPES.map((t) => `POST /${t}/create`),
  'POST /timelineGraph/{dbname}/{key}/{startTime}/{endTime}',
  'POST /histGraph/{dbname}/{key}/{startTime}/{endTime}',
  'GET /getTrend/{dbname}/{key}',
  'GET /api/users',
  'POST /api/users',
  'PATCH /api/users',
  'DELETE /api/users/{username}',
  'GET /setting',
  'POST /updateSetting',
  'POST /setsmtpvault',
  'GET /v1/db/exec/stats',
  'GET /v1/db/exec/buckets',
  'POST /backupDatabase',
  'GET /reloadCertificates',
  'GET /getCert',
  'GET /ping',
  'GET /uptime',
  'GET /api/metrics',
  'GET /docs/index.html',
];
const AGENT_ROUTES = [
  'POST /api/auth',
  'POST /loginComponent',
  'POST /loginComponent1Year',
  'POST /loginComponent15Years',
  'GET /refresh_token',
  'GET /runDiscovery',
  'GET /getProcessByPort/{port}',
  'POST /computeThreshold',
  'GET /api/metrics',
  'GET /api/reportSysMetricsGraph/{startTime}/{endTime}',
  'GET /process/reportGraph/{type}/{key}/{startTime}/{endTime}',
  'GET /api/db/discovery/bucket/{bucket}/key/{key}',
  'GET /v1/db/discovery/bucket/{bucket}/allJSON',
  'GET /api/setting',
  'POST /updateSetting',
  'POST /setsmtp',
  'POST /checkConnectIntegrators',
  'GET /partServerlogfile/{bytes}',
  'GET /discovery/logfile/server/{filename}',
  'GET /serverlogfiles/{filename}',
  'POST /backupDatabase',
  'POST /reinitDatabase',
  'GET /v1/db/discovery/stats',
  'GET /api/users',
  'POST /api/users',
  'DELETE /api/users/{username}',
  'GET /reloadCertificates',
  'GET /getCert',
  'GET /ping',
  'GET /docs/index.html',
];

async function check(app: FastifyInstance, routes: string[]): Promise<void> {
  const openapi = (await openApiDocument(app)) as { paths: Record<string, Record<string, unknown>> };
  const missing: string[] = [];
  const undocumented: string[] = [];
  for (const r of routes) {
    const [method, p] = r.split(' ') as [string, string];
    const url = p.replace(/\{(\w+)\}/g, ':$1');
    if (!app.hasRoute({ method, url })) missing.push(r);
    else if (p !== '/docs/index.html' && !openapi.paths[p]?.[method.toLowerCase()]) undocumented.push(r);
  }
  assert.deepEqual(missing, [], 'routes of the spec that are not registered');
  assert.deepEqual(undocumented, [], 'routes missing from the OpenAPI document');
}

test('the monitor service registers and documents every endpoint of its spec', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spec-routes-'));
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir,
    LOG_STDOUT: 'false',
    ADMIN_PASSWORD: 'admin-pass-123',
    MONITOR_PORT: '0',
  });
  const svc = await createMonitorService(cfg);
  try {
    await svc.platform.app.ready();
    await check(svc.platform.app, MONITOR_ROUTES);
  } finally {
    await svc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the discovery agent registers and documents every endpoint of its spec', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spec-routes-'));
  const cfg = readConfig('agent', {
    DATA_DIR: dataDir,
    LOG_STDOUT: 'false',
    ADMIN_PASSWORD: 'admin-pass-123',
    AGENT_PORT: '0',
  });
  const svc = await createAgentService(cfg, { schedule: false });
  try {
    await svc.platform.app.ready();
    await check(svc.platform.app, AGENT_ROUTES);
  } finally {
    await svc.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
