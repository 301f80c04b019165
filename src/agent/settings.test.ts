/**
 * The agent's settings and SMTP records on the shared settings service: every key's accepted and refused values,
 * the Min ≤ Maj ≤ Cri and smtpEnabled → smtpServerName rules (400 naming a key, nothing written), the password kept
 * verbatim and sealed, persistence, listeners, and the repair of stored records that break a rule.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { AppError } from '../core/errors.js';
import { createSecretBox } from '../core/secrets/secret-box.js';
import { openLmdbStore, type LmdbStore } from '../core/storage/lmdb-store.js';
import {
  AgentSettings,
  defaultSettings,
  METRIC_GROUPS,
  parseSchedMinutes,
  SCHED_MAX_MINUTES,
  SCHED_MIN_MINUTES,
} from './settings.js';

const box = createSecretBox(randomBytes(32));
const dirs: string[] = [];
const stores: LmdbStore[] = [];

/** A fresh store each: the agent's records have fixed names. */
async function fresh(): Promise<{ a: AgentSettings; store: LmdbStore }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-settings-'));
  dirs.push(dir);
  const store = await openLmdbStore({ path: dir, noSync: true });
  stores.push(store);
  const a = new AgentSettings(store, box);
  await a.load();
  return { a, store };
}
after(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const bad = (field?: string) => (e: unknown) =>
  e instanceof AppError && e.status === 400 && (field === undefined || e.field === field);

/** Accepted and refused values for every settings key; the test below checks this covers every key there is. */
function cases(key: string): { good: string[]; bad: string[] } {
  if (key === 'logLevel')
    return { good: ['trace', 'debug', 'info', 'warn', 'error'], bad: ['', 'verbose', 'INFO', 'fatal'] };
  if (key === 'sched')
    return {
      good: ['1MIN', '5MIN', '1440MIN'],
      bad: ['', '0MIN', '1441MIN', '5min', '5', 'MIN', '5 MIN', '-5MIN', '1.5MIN', '5H', '99999MIN'],
    };
  if (/^disco[A-Z]+GFixedThresh(Min|Maj|Cri)$/.test(key))
    return { good: ['', '0', '42', '97.5'], bad: ['abc', '-1', '1e3', 'NaN', 'Infinity', '5%', '0x10'] };
  if (/^disco[A-Z]+GMonEnabled$/.test(key)) return { good: ['true', 'false'], bad: ['', 'yes', '1', 'TRUE'] };
  if (key === 'processes')
    return {
      good: ['', 'nginx', 'nginx, postgres,java', 'a.b_c-d:e+f@g'],
      bad: ['bad name', 'x/y', 'a;b', 'x'.repeat(65)],
    };
  if (key === 'ports')
    return { good: ['', '22', '22, 443,65535', '1'], bad: ['0', '65536', 'http', '22;80', '-1', '1.5'] };
  throw new Error(`no validation cases for settings key ${key}: add them here`);
}

test('settings: the per-group key pattern exists for every metric group', () => {
  const keys = Object.keys(defaultSettings());
  for (const g of METRIC_GROUPS) {
    for (const suffix of ['FixedThreshMin', 'FixedThreshMaj', 'FixedThreshCri', 'MonEnabled'])
      assert.ok(keys.includes(`disco${g}G${suffix}`), `disco${g}G${suffix}`);
  }
  assert.deepEqual([...METRIC_GROUPS].sort(), ['CPU', 'DISK', 'LOAD', 'MEM', 'PORT', 'PROC', 'SWAP']);
  assert.equal(keys.length, 4 + METRIC_GROUPS.length * 4);
});

test('settings: every key accepts its documented values and refuses others with 400 naming the key', async () => {
  const { a } = await fresh();
  assert.deepEqual(a.get(), defaultSettings());
  for (const key of Object.keys(defaultSettings())) {
    const { good, bad: refused } = cases(key);
    // Thresholds must keep Min ≤ Maj ≤ Cri: clear the group's levels first.
    const group = /^disco([A-Z]+)GFixedThresh/.exec(key)?.[1];
    if (group)
      await a.update(Object.fromEntries(['Min', 'Maj', 'Cri'].map((l) => [`disco${group}GFixedThresh${l}`, ''])));
    for (const v of good) assert.equal((await a.update({ [key]: v }))[key], v.trim(), `${key}=${v}`);
    for (const v of refused) await assert.rejects(a.update({ [key]: v }), bad(`body.${key}`), `${key}=${v}`);
    await assert.rejects(a.update({ [key]: 5 }), bad(`body.${key}`));
  }
});

test('settings: unknown keys 400; Min ≤ Maj ≤ Cri names a key sent; values trimmed; no partial apply', async () => {
  const { a, store } = await fresh();
  await assert.rejects(a.update({ nope: 'x' }), bad('body.nope'));
  await assert.rejects(a.update({ discoFOOGMonEnabled: 'true' }), bad('body.discoFOOGMonEnabled'));
  await assert.rejects(a.update({ smtpPort: '25' }), bad('body.smtpPort'));
  await assert.rejects(a.update({ discoCPUGFixedThreshMin: '99' }), bad('body.discoCPUGFixedThreshMin'));
  await assert.rejects(a.update({ discoCPUGFixedThreshCri: '85' }), bad('body.discoCPUGFixedThreshCri'));
  await assert.rejects(
    a.update({ discoLOADGFixedThreshMaj: '4', discoLOADGFixedThreshCri: '3' }),
    bad('body.discoLOADGFixedThreshMaj'),
  );
  const ok = await a.update({ discoLOADGFixedThreshMin: '2', discoLOADGFixedThreshCri: '8' });
  assert.equal(ok.discoLOADGFixedThreshCri, '8');
  assert.equal((await a.update({ sched: ' 10MIN ' })).sched, '10MIN');
  // A bad key anywhere, or a broken rule, refuses the whole update: nothing is written.
  const before = await store.bucket('SETTINGS').get('settings');
  await assert.rejects(a.update({ sched: '15MIN', nope: '1' }), bad('body.nope'));
  await assert.rejects(
    a.update({ sched: '15MIN', discoMEMGFixedThreshMaj: '99' }),
    bad('body.discoMEMGFixedThreshMaj'),
  );
  assert.equal(a.get().sched, '10MIN');
  assert.deepEqual(await store.bucket('SETTINGS').get('settings'), before);
  assert.deepEqual(await a.update({}), a.get(), 'an empty update changes nothing');
});

test('sched: <N>MIN with N from SCHED_MIN_MINUTES to SCHED_MAX_MINUTES', () => {
  assert.equal(SCHED_MIN_MINUTES, 1);
  assert.equal(SCHED_MAX_MINUTES, 1440);
  assert.equal(parseSchedMinutes('1MIN'), 1);
  assert.equal(parseSchedMinutes('1440MIN'), 1440);
  assert.equal(parseSchedMinutes('0MIN'), undefined);
  assert.equal(parseSchedMinutes('1441MIN'), undefined);
  assert.equal(parseSchedMinutes('15min'), undefined);
});

test('smtp: validated; unknown keys 400; smtpEnabled needs smtpServerName; password verbatim, sealed, never public', async () => {
  const { a, store } = await fresh();
  for (const [k, v] of [
    ['smtpEnabled', 'yes'],
    ['smtpTLS', '1'],
    ['smtpPort', '0'],
    ['smtpPort', '70000'],
    ['smtpServerName', 'a b'],
    ['smtpTo', 'not-an-address'],
    ['smtpTo', 'a@b, x y@z'],
    ['nope', 'x'],
  ]) {
    await assert.rejects(a.setSmtp({ [k!]: v }), bad(`body.${k}`), `${k}=${v}`);
  }
  await assert.rejects(a.setSmtp({ smtpEnabled: 'true' }), bad('body.smtpServerName'));
  assert.equal(await store.bucket('SETTINGS').get('smtp'), undefined, 'nothing written');
  const pub = await a.setSmtp({
    smtpEnabled: 'true',
    smtpServerName: 'mail.example.test',
    smtpPort: '465',
    smtpPwd: ' pw with spaces ',
    smtpTo: 'a@b.test, c@d.test',
  });
  assert.equal(pub.smtpPwdSet, 'true');
  assert.ok(!('smtpPwd' in pub));
  await assert.rejects(a.setSmtp({ smtpServerName: '' }), bad('body.smtpServerName'), 'still enabled');
  const raw = await store.bucket('SETTINGS').get<Record<string, string>>('smtp');
  assert.ok(box.isSealed(raw!.smtpPwd!), 'sealed at rest under smtpPwd');
  assert.equal(a.smtpWithSecret().smtpPwd, ' pw with spaces ', 'the password is kept verbatim');
  assert.equal((await a.setSmtp({ smtpPwd: '' })).smtpPwdSet, 'false');
  assert.equal(a.smtpWithSecret().smtpPwd, '');
});

test('AgentSettings: persisted, reloaded, listeners told; a refused update changes nothing', async () => {
  const { a, store } = await fresh();
  const seen: string[] = [];
  a.onChange((s) => seen.push(s.sched!));
  await a.update({ sched: '15MIN', processes: 'nginx' });
  await assert.rejects(a.update({ sched: '0MIN' }), AppError);
  assert.deepEqual(seen, ['15MIN']);
  await a.setSmtp({ smtpServerName: 'mx.test', smtpPwd: 'hunter2-secret' });
  const b = new AgentSettings(store, box);
  await b.load();
  assert.equal(b.get().sched, '15MIN');
  assert.equal(b.get().processes, 'nginx');
  assert.equal(b.smtpPublic().smtpPwdSet, 'true');
  assert.ok(!JSON.stringify(b.smtpPublic()).includes('hunter2'));
  assert.ok(!JSON.stringify(await store.bucket('SETTINGS').get('smtp')).includes('hunter2'), 'sealed at rest');
  assert.equal(b.smtpWithSecret().smtpPwd, 'hunter2-secret');
  // Keys saved by an older version that are no longer known are dropped on load.
  await store.bucket('SETTINGS').put('settings', { ...b.get(), legacyKey: 'x' });
  await b.load();
  assert.equal(b.get().legacyKey, undefined);
});

test('load: a stored record that breaks a rule gets the named key, then the rule keys, back to defaults (logged)', async () => {
  const { store } = await fresh();
  const b = store.bucket('SETTINGS');
  await b.put('settings', {
    ...defaultSettings(),
    discoCPUGFixedThreshMin: '99', // above Maj: reset; Maj and Cri stay
    discoMEMGFixedThreshMin: '10',
    discoMEMGFixedThreshMaj: '20',
    discoMEMGFixedThreshCri: '30',
  });
  await b.put('smtp', { smtpEnabled: 'true', smtpServerName: '', smtpTo: 'ops@x.test' });
  const logged: string[] = [];
  const a = new AgentSettings(store, box);
  await a.load({ error: (o) => logged.push((o as { setting: string }).setting) });
  const s = a.get();
  assert.deepEqual(
    [s.discoCPUGFixedThreshMin, s.discoCPUGFixedThreshMaj, s.discoCPUGFixedThreshCri],
    ['80', '90', '95'],
  );
  assert.deepEqual([s.discoMEMGFixedThreshMin, s.discoMEMGFixedThreshCri], ['10', '30'], 'good stored values stay');
  const smtp = a.smtpPublic();
  assert.deepEqual([smtp.smtpEnabled, smtp.smtpServerName, smtp.smtpTo], ['false', '', 'ops@x.test']);
  assert.deepEqual(logged.sort(), ['discoCPUGFixedThreshMin', 'smtpEnabled', 'smtpServerName']);
});
