import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { AppError } from '../core/errors.js';
import { createSecretBox } from '../core/secrets/secret-box.js';
import { openLmdbStore, type LmdbStore } from '../core/storage/lmdb-store.js';
import {
  AgentSettings,
  defaultSettings,
  mergeSettings,
  mergeSmtp,
  METRIC_GROUPS,
  parseSchedMinutes,
  SCHED_MAX_MINUTES,
  SCHED_MIN_MINUTES,
  type StoredSmtp,
} from './settings.js';

const box = createSecretBox(randomBytes(32));

function rejects400(fn: () => unknown, field?: string): void {
  assert.throws(
    fn,
    (e: unknown) => e instanceof AppError && e.status === 400 && (field === undefined || e.field === field),
  );
}

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

test('settings: every key accepts its documented values and refuses others with 400 naming the key', () => {
  const base = defaultSettings();
  for (const key of Object.keys(base)) {
    const { good, bad } = cases(key);
    for (const v of good) {
      // Thresholds must keep Min ≤ Maj ≤ Cri: clear the group's other levels.
      const group = /^disco([A-Z]+)GFixedThresh/.exec(key)?.[1];
      const cur = group
        ? {
            ...base,
            [`disco${group}GFixedThreshMin`]: '',
            [`disco${group}GFixedThreshMaj`]: '',
            [`disco${group}GFixedThreshCri`]: '',
          }
        : base;
      assert.equal(mergeSettings(cur, { [key]: v })[key], v.trim(), `${key}=${v}`);
    }
    for (const v of bad) rejects400(() => mergeSettings(base, { [key]: v }), `body.${key}`);
    rejects400(() => mergeSettings(base, { [key]: 5 }), `body.${key}`);
  }
});

test('settings: unknown keys 400; Min ≤ Maj ≤ Cri; values trimmed; no partial apply', () => {
  const base = defaultSettings();
  rejects400(() => mergeSettings(base, { nope: 'x' }), 'body.nope');
  rejects400(() => mergeSettings(base, { discoFOOGMonEnabled: 'true' }), 'body.discoFOOGMonEnabled');
  rejects400(() => mergeSettings(base, { smtpPort: '25' }), 'body.smtpPort');
  rejects400(() => mergeSettings(base, { discoCPUGFixedThreshMin: '99' }), 'body.discoCPUGFixedThreshMin');
  rejects400(() => mergeSettings(base, { discoLOADGFixedThreshMaj: '4', discoLOADGFixedThreshCri: '3' }));
  assert.equal(
    mergeSettings(base, { discoLOADGFixedThreshMin: '2', discoLOADGFixedThreshCri: '8' }).discoLOADGFixedThreshCri,
    '8',
  );
  assert.equal(mergeSettings(base, { sched: ' 10MIN ' }).sched, '10MIN');
  // A bad key anywhere refuses the whole update; the input object is never modified.
  const copy = { ...base };
  rejects400(() => mergeSettings(base, { sched: '10MIN', nope: '1' }));
  assert.deepEqual(base, copy);
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

test('smtp: validated; unknown keys 400; password sealed, never public', () => {
  const empty: StoredSmtp = {
    smtpEnabled: 'false',
    smtpServerName: '',
    smtpPort: '587',
    smtpUsername: '',
    smtpTLS: 'true',
    smtpFrom: '',
    smtpTo: '',
    smtpPwdSealed: '',
  };
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
    rejects400(() => mergeSmtp(empty, { [k!]: v }, box), `body.${k}`);
  }
  rejects400(() => mergeSmtp(empty, { smtpEnabled: 'true' }, box), 'body.smtpServerName');
  const s = mergeSmtp(
    empty,
    {
      smtpEnabled: 'true',
      smtpServerName: 'mail.example.test',
      smtpPort: '465',
      smtpPwd: ' pw with spaces ',
      smtpTo: 'a@b.test, c@d.test',
    },
    box,
  );
  assert.ok(box.isSealed(s.smtpPwdSealed));
  assert.equal(box.decrypt(s.smtpPwdSealed), ' pw with spaces ', 'the password is kept verbatim');
  assert.equal(mergeSmtp(s, { smtpPwd: '' }, box).smtpPwdSealed, '');
});

let dir: string;
let store: LmdbStore;
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agent-settings-'));
  store = await openLmdbStore({ path: dir, noSync: true });
});
after(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('AgentSettings: persisted, reloaded, listeners told; a refused update changes nothing', async () => {
  const a = new AgentSettings(store, box);
  await a.load();
  assert.deepEqual(a.get(), defaultSettings());
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
