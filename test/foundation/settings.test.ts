/**
 * Settings on the real monitor service: validation of each key (nothing changes on a partly invalid update), logLevel
 * applied live (debug lines appear in the log file), SMTP password encrypted at rest and never returned, and no
 * password ever written to the logs.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, test } from 'node:test';
import { ADMIN_PASSWORD, startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { assertError } from '../support/api.kit.js';

let h: MonitorHarness;

before(async () => {
  h = await startMonitor();
});
after(async () => h?.stop());

const get = async () => (await h.admin.request('GET', '/setting')).body;

function readTree(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const buf = fs.readFileSync(path.join(e.parentPath, e.name));
    parts.push(e.name.endsWith('.gz') ? zlib.gunzipSync(buf) : buf);
  }
  return Buffer.concat(parts);
}

async function waitFor(fn: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > timeoutMs) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('GET /setting shows the spec keys with their values', async () => {
  const s = await get();
  for (const k of ['logLevel', 'concurrencyLimit', 'dataRetention', 'autoThreshold', 'autoThresholdRange'])
    assert.equal(typeof s[k], 'string', k);
  assert.equal(s.smtp.smtpPassword, 'unset');
});

test('each key is validated; a bad value or unknown key → 400 naming it', async () => {
  const bad: [string, unknown][] = [
    ['logLevel', 'verbose'],
    ['logLevel', 'DEBUG'],
    ['logLevel', ''],
    ['concurrencyLimit', '0'],
    ['concurrencyLimit', '-3'],
    ['concurrencyLimit', '1.5'],
    ['concurrencyLimit', 'ten'],
    ['concurrencyLimit', 0],
    ['dataRetention', '0'],
    ['dataRetention', '-1'],
    ['dataRetention', '2e3'],
    ['dataRetention', 'x'],
    ['autoThreshold', 'yes'],
    ['autoThreshold', '1'],
    ['autoThreshold', 'TRUE'],
    ['autoThresholdRange', '48'],
    ['autoThresholdRange', '0'],
    ['autoThresholdRange', 'week'],
  ];
  for (const [k, v] of bad) assertError(await h.admin.request('POST', '/updateSetting', { body: { [k]: v } }), 400, k);
  assertError(await h.admin.request('POST', '/updateSetting', { body: { fooBar: '1' } }), 400, 'fooBar');
  assertError(await h.admin.request('POST', '/updateSetting', { body: {} }), 400);
  assertError(await h.admin.request('POST', '/updateSetting', { body: { logLevel: ['debug'] } }), 400, 'logLevel');
  assertError(await h.admin.request('POST', '/setsmtpvault', { body: { smtpPort: '70000' } }), 400, 'smtpPort');
  assertError(await h.admin.request('POST', '/setsmtpvault', { body: { smtpPasswd: 'x' } }), 400, 'smtpPasswd');
});

test('a partly invalid update changes nothing', async () => {
  const before = await get();
  assertError(
    await h.admin.request('POST', '/updateSetting', {
      body: { concurrencyLimit: '17', dataRetention: '48', autoThresholdRange: '99' },
    }),
    400,
    'autoThresholdRange',
  );
  assertError(
    await h.admin.request('POST', '/updateSetting', { body: { concurrencyLimit: '17', nope: '1' } }),
    400,
    'nope',
  );
  assert.deepEqual(await get(), before);
});

test('valid values are stored; JSON numbers and booleans are accepted as strings', async () => {
  const r = await h.admin.request('POST', '/updateSetting', {
    body: { concurrencyLimit: 12, dataRetention: '48', autoThreshold: true, autoThresholdRange: 720 },
  });
  assert.equal(r.status, 200, r.text);
  const s = await get();
  assert.equal(s.concurrencyLimit, '12');
  assert.equal(s.dataRetention, '48');
  assert.equal(s.autoThreshold, 'true');
  assert.equal(s.autoThresholdRange, '720');
  for (const v of ['24', '168'])
    assert.equal((await h.admin.request('POST', '/updateSetting', { body: { autoThresholdRange: v } })).status, 200);
  for (const v of ['trace', 'debug', 'info', 'warn', 'error'])
    assert.equal((await h.admin.request('POST', '/updateSetting', { body: { logLevel: v } })).status, 200, v);
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { autoThreshold: 'false' } })).status, 200);
});

test('logLevel takes effect live: debug lines reach <dataDir>/logs/monitor.log', async () => {
  const logFile = path.join(h.dataDir, 'logs', 'monitor.log');
  const debugLines = () =>
    (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '')
      .split('\n')
      .filter((l) => l.includes('"level":20'));
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { logLevel: 'warn' } })).status, 200);
  await h.admin.request('POST', '/updateSetting', { body: { concurrencyLimit: 'before-debug' } }); // a 400: logged at debug
  await new Promise((r) => setTimeout(r, 200));
  const n0 = debugLines().filter((l) => l.includes('before-debug') || l.includes('concurrencyLimit')).length;
  assert.equal(n0, 0, 'no debug line while at warn');
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { logLevel: 'debug' } })).status, 200);
  await h.admin.request('POST', '/updateSetting', { body: { concurrencyLimit: 'after-debug' } });
  await waitFor(() => debugLines().some((l) => l.includes('concurrencyLimit')), 'a debug line in monitor.log');
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { logLevel: 'warn' } })).status, 200);
});

test('/setsmtpvault stores the password encrypted and never returns it; no secret ever reaches the logs', async () => {
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { logLevel: 'trace' } })).status, 200);
  const smtpPw = 'Smtp-Plaintext-Secret-4711';
  const host = 'mail.sentinel-settings-test.example';
  const r = await h.admin.request('POST', '/setsmtpvault', {
    body: { smtpHost: host, smtpPort: 2525, smtpUser: 'alerts', smtpPassword: smtpPw, smtpEnabled: 'true' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.smtpPassword, 'set');
  assert.ok(!r.text.includes(smtpPw));
  const s = await h.admin.request('GET', '/setting');
  assert.equal(s.body.smtp.smtpPassword, 'set');
  assert.equal(s.body.smtp.smtpHost, host);
  assert.ok(!s.text.includes(smtpPw));
  // At rest: sealed in the store, and the plaintext is nowhere in the data files (while the host name is).
  const stored = await h.svc.platform.store.bucket('settings').get<Record<string, string>>('smtp');
  assert.match(stored!.smtpPassword!, /^enc:v1:/);
  const data = readTree(path.join(h.dataDir, 'monitor-db'));
  assert.ok(data.includes(host), 'control: plain settings are found in the data files');
  assert.ok(!data.includes(smtpPw), 'the SMTP password is not stored in clear');
  // A failed login and a successful one with passwords that must not be logged.
  const wrongPw = 'Wrong-Login-Secret-0815';
  await h.admin.request('POST', '/login', { body: { username: 'admin', password: wrongPw }, token: null });
  const ok = await h.admin.request('POST', '/login', {
    body: { username: 'admin', password: ADMIN_PASSWORD },
    token: null,
  });
  assert.equal(ok.status, 200);
  await h.admin.request('POST', '/api/users', { body: { username: 'log-user', password: 'Log-User-Secret-1234' } });
  await new Promise((res) => setTimeout(res, 300));
  const logs = readTree(path.join(h.dataDir, 'logs'));
  assert.ok(logs.length > 0);
  assert.ok(logs.includes('failed login'), 'control: the failed login was logged');
  for (const secret of [smtpPw, wrongPw, ADMIN_PASSWORD, 'Log-User-Secret-1234', ok.body.token, h.admin.token!]) {
    assert.ok(!logs.includes(secret), `a secret (${secret.slice(0, 6)}…) is in the logs`);
  }
  assert.equal((await h.admin.request('POST', '/updateSetting', { body: { logLevel: 'warn' } })).status, 200);
});
