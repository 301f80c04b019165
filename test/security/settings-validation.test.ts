/**
 * docs/security.md §15 (review F15), through the HTTP API of both real services: a mistyped CIDR in networkDeny is a
 * 400 and nothing is stored, so the service still starts (before: stored despite the 400, then the monitor refused to
 * start); lists are stored normalised. A bad value written into the store behind the API's back (an older version,
 * a hand edit) is logged at start and its default used, never fatal (before: the monitor refused to start on a bad
 * CIDR, the agent on a bad logLevel, and the agent served the bad values).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { startMonitor } from '../support/monitor.harness.js';
import { startAgent } from '../support/agent.harness.js';
import { openLmdbStore } from '../../src/core/storage/lmdb-store.js';
import { DEFAULT_DENY } from '../../src/monitor/monitor-types/lib/network-policy.js';

const DENY_DEFAULT = DEFAULT_DENY.join(',');

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Reads a service's stored record, lets `edit` change it, writes it back (the service is stopped). */
async function editStored(
  dbDir: string,
  bucket: string,
  key: string,
  edit: (v: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const store = await openLmdbStore({ path: dbDir });
  try {
    const b = store.bucket(bucket);
    await b.put(key, edit((await b.get<Record<string, unknown>>(key)) ?? {}));
  } finally {
    await store.close();
  }
}

test('monitor: a mistyped CIDR is 400, nothing is stored, and the service starts again', async () => {
  const dataDir = tempDir('settings-mon-');
  let h = await startMonitor({ dataDir });
  for (const bad of ['169.254.169.254/32,999.1.1.1/32', '10.0.0.0/33', '1.2.3/8', 'fe80::zz/64', '10.0.0.0/8/8']) {
    const r = await h.admin.request('POST', '/updateSetting', { body: { networkDeny: bad } });
    assert.equal(r.status, 400, `${bad}: ${r.text}`);
    assert.equal(r.body.field, 'body.networkDeny');
  }
  // Validated whole: one bad key in a patch stores none of it.
  const mixed = await h.admin.request('POST', '/updateSetting', {
    body: { networkAllow: '10.0.0.0/8', networkDeny: '300.0.0.0/8' },
  });
  assert.equal(mixed.status, 400, mixed.text);
  let view = await h.admin.request('GET', '/setting');
  assert.deepEqual([view.body.networkDeny, view.body.networkAllow], [DENY_DEFAULT, '']);
  const ok = await h.admin.request('POST', '/updateSetting', {
    body: { networkDeny: ' 169.254.169.254/32 , 10.9.8.7 ,fd00::/8' },
  });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.networkDeny, '169.254.169.254/32,10.9.8.7/32,fd00::/8', 'stored normalised');
  await h.stop({ keepData: true });
  h = await startMonitor({ dataDir });
  view = await h.admin.request('GET', '/setting');
  assert.equal(view.body.networkDeny, '169.254.169.254/32,10.9.8.7/32,fd00::/8');
  await h.stop({ keepData: true });
});

test('monitor: bad values already in the store are logged and ignored at start', async () => {
  const dataDir = tempDir('settings-mon-stored-');
  let h = await startMonitor({ dataDir });
  await h.admin.request('POST', '/updateSetting', { body: { dataRetention: '48' } });
  await h.stop({ keepData: true });
  await editStored(path.join(dataDir, 'monitor-db'), 'settings', 'settings', (v) => ({
    ...v,
    networkDeny: '169.254.169.254/32,999.1.1.1/32',
    networkAllow: 'not-a-cidr',
    timezone: 'Mars/Olympus_Mons',
    concurrencyLimit: 'lots',
    autoThresholdRange: 7,
  }));
  h = await startMonitor({ dataDir });
  const view = await h.admin.request('GET', '/setting');
  assert.equal(view.status, 200);
  assert.deepEqual(
    [view.body.networkDeny, view.body.networkAllow, view.body.timezone, view.body.concurrencyLimit],
    [DENY_DEFAULT, '', 'UTC', '256'],
    'defaults in force',
  );
  assert.equal(view.body.autoThresholdRange, '168');
  assert.equal(view.body.dataRetention, '48', 'good stored values stay');
  // The service works: a setting can be changed (and the bad ones are replaced by it).
  const r = await h.admin.request('POST', '/updateSetting', { body: { timezone: 'Europe/Berlin' } });
  assert.equal(r.status, 200, r.text);
  await h.stop({ keepData: true });
  const log = fs.readFileSync(path.join(dataDir, 'logs', 'monitor.log'), 'utf8');
  for (const key of ['networkDeny', 'networkAllow', 'timezone', 'concurrencyLimit', 'autoThresholdRange'])
    assert.match(log, new RegExp(`"setting":"${key}".*stored setting ignored`), `${key} logged`);
});

test('agent: a bad patch stores nothing; bad stored values are logged and ignored at start', async () => {
  const dataDir = tempDir('settings-agent-');
  let h = await startAgent({}, { DATA_DIR: dataDir });
  const bad = await h.admin.request('POST', '/updateSetting', { body: { ports: '22', sched: 'soon' } });
  assert.equal(bad.status, 400, bad.text);
  assert.equal((await h.admin.request('GET', '/api/setting')).body.ports, '');
  const ok = await h.admin.request('POST', '/updateSetting', { body: { discoMEMGFixedThreshMin: '70' } });
  assert.equal(ok.status, 200, ok.text);
  await h.close();
  await editStored(path.join(dataDir, 'agent-db'), 'SETTINGS', 'settings', (v) => ({
    ...v,
    logLevel: 'loud',
    sched: 'soon',
    ports: '22,99999',
    processes: 'a b',
    discoCPUGFixedThreshMin: '99',
    discoCPUGFixedThreshMaj: '50',
    discoDISKGMonEnabled: 1,
  }));
  await editStored(path.join(dataDir, 'agent-db'), 'SETTINGS', 'smtp', (v) => ({
    ...v,
    smtpPort: 'x',
    smtpTo: 'nope',
  }));
  h = await startAgent({}, { DATA_DIR: dataDir, LOG_LEVEL: '' });
  const s = (await h.admin.request('GET', '/api/setting')).body;
  assert.deepEqual(
    [s.logLevel, s.sched, s.ports, s.processes, s.discoCPUGFixedThreshMin, s.discoCPUGFixedThreshMaj],
    ['info', '5MIN', '', '', '80', '90'],
    'defaults in force',
  );
  assert.equal(s.discoDISKGMonEnabled, 'true');
  assert.equal(s.discoMEMGFixedThreshMin, '70', 'good stored values stay');
  assert.deepEqual([s.smtpPort, s.smtpTo], ['587', '']);
  await h.close();
  const log = fs.readFileSync(path.join(dataDir, 'logs', 'agent.log'), 'utf8');
  for (const key of ['logLevel', 'sched', 'ports', 'processes', 'discoCPUGFixedThreshMin', 'smtpPort', 'smtpTo'])
    assert.match(log, new RegExp(`"setting":"${key}".*stored setting ignored`), `${key} logged`);
});

test('agent: a combination that breaks a cross-key rule is 400 naming the key; nothing is stored', async () => {
  const dataDir = tempDir('settings-agent-rules-');
  let h = await startAgent({}, { DATA_DIR: dataDir });
  const refused: [string, Record<string, string>, string][] = [
    ['/updateSetting', { discoCPUGFixedThreshMin: '99' }, 'body.discoCPUGFixedThreshMin'],
    ['/updateSetting', { sched: '10MIN', discoCPUGFixedThreshCri: '85' }, 'body.discoCPUGFixedThreshCri'],
    [
      '/updateSetting',
      { discoLOADGFixedThreshMaj: '4', discoLOADGFixedThreshCri: '3' },
      'body.discoLOADGFixedThreshMaj',
    ],
    ['/setsmtp', { smtpEnabled: 'true', smtpPort: '25' }, 'body.smtpServerName'],
  ];
  const check = async (): Promise<void> => {
    for (const [route, body, field] of refused) {
      const r = await h.admin.request('POST', route, { body });
      assert.equal(r.status, 400, `${route} ${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.body.field, field, r.text);
    }
    const s = (await h.admin.request('GET', '/api/setting')).body;
    assert.deepEqual(
      [
        s.sched,
        s.discoCPUGFixedThreshMin,
        s.discoCPUGFixedThreshCri,
        s.discoLOADGFixedThreshMaj,
        s.smtpEnabled,
        s.smtpPort,
      ],
      ['5MIN', '80', '95', '', 'false', '587'],
      'nothing of a refused update applied',
    );
  };
  await check();
  // The same combinations sent together with their fix are accepted.
  const ok = await h.admin.request('POST', '/updateSetting', {
    body: { discoLOADGFixedThreshMaj: '4', discoLOADGFixedThreshCri: '6' },
  });
  assert.equal(ok.status, 200, ok.text);
  await h.admin.request('POST', '/updateSetting', {
    body: { discoLOADGFixedThreshMaj: '', discoLOADGFixedThreshCri: '' },
  });
  await h.close();
  h = await startAgent({}, { DATA_DIR: dataDir });
  await check(); // and after a restart: nothing was persisted
  await h.close();
});
