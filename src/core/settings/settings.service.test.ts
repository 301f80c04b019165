import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { openLmdbStore, type LmdbStore } from '../storage/lmdb-store.js';
import { createSecretBox } from '../secrets/secret-box.js';
import { AppError } from '../errors.js';
import { SettingsService, validators as v, type SettingsRule } from './settings.service.js';

let dir: string;
let store: LmdbStore;
const box = createSecretBox(randomBytes(32));

function make(key = 'cfg'): SettingsService {
  return new SettingsService(store, box, key)
    .define('level', { default: 'info', description: 'level', validate: v.oneOf(['debug', 'info']) })
    .define('limit', { default: '10', description: 'limit', validate: v.positiveInt(100) })
    .define('zero', { default: '0', description: 'zero ok', validate: v.nonNegativeInt(5) })
    .define('flag', { default: 'false', description: 'flag', validate: v.bool() })
    .define('name', { default: '', description: 'name', validate: v.text(8, /^[a-z]+$/) })
    .define('pw', { default: '', description: 'secret', validate: v.text(64), secret: true });
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'settings-unit-'));
  store = await openLmdbStore({ path: path.join(dir, 'db') });
});
after(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const badField = (field: string) => (e: unknown) =>
  e instanceof AppError && e.status === 400 && e.field === `body.${field}`;

test('defaults, update, persistence across instances', async () => {
  const s = make();
  await s.load();
  assert.deepEqual(s.publicView(), { level: 'info', limit: '10', zero: '0', flag: 'false', name: '', pw: 'unset' });
  await s.update({ level: 'debug', limit: ' 007 ' });
  assert.equal(s.get('limit'), '7', 'trimmed and normalised');
  const again = make();
  await again.load();
  assert.equal(again.get('level'), 'debug');
  assert.equal(again.get('limit'), '7');
});

test('validators: each bad value → 400 naming the key', async () => {
  const s = make('v');
  await s.load();
  const cases: [string, string][] = [
    ['level', 'trace'],
    ['limit', '0'],
    ['limit', '101'],
    ['limit', '-1'],
    ['limit', '1.5'],
    ['limit', 'x'],
    ['limit', ''],
    ['zero', '6'],
    ['zero', '-1'],
    ['flag', 'yes'],
    ['flag', ''],
    ['name', 'toolongname'],
    ['name', 'ABC'],
  ];
  for (const [k, val] of cases) await assert.rejects(s.update({ [k]: val }), badField(k), `${k}=${val}`);
  await assert.rejects(s.update({ nope: '1' }), badField('nope'));
  await assert.rejects(s.update({ limit: 5 }), badField('limit'), 'non-strings are refused here');
  await assert.rejects(s.update({}), (e: unknown) => e instanceof AppError && e.status === 400);
  assert.equal((await s.update({ zero: '0', name: '' })).zero, '0');
});

test('an update is validated whole: one bad key and nothing changes, no listener runs', async () => {
  const s = make('whole');
  await s.load();
  let calls = 0;
  s.onChange(() => calls++);
  await assert.rejects(s.update({ limit: '50', level: 'nope' }), badField('level'));
  assert.equal(s.get('limit'), '10');
  const fresh = make('whole');
  await fresh.load();
  assert.equal(fresh.get('limit'), '10', 'nothing was written');
  assert.equal(calls, 0);
  await s.update({ limit: '50', flag: 'true' });
  assert.equal(calls, 1);
});

test('listeners hear the changed keys and the new values', async () => {
  const s = make('listen');
  await s.load();
  const heard: [string[], string][] = [];
  s.onChange((keys, all) => heard.push([keys, all.level!]));
  await s.update({ level: 'debug' });
  assert.deepEqual(heard, [[['level'], 'debug']]);
});

test('secrets are sealed at rest, shown as set/unset, readable internally, and can be cleared', async () => {
  const s = make('sec');
  await s.load();
  const view = await s.update({ pw: 'hunter2-secret' });
  assert.equal(view.pw, 'set');
  assert.ok(!JSON.stringify(view).includes('hunter2'));
  assert.equal(s.get('pw'), 'hunter2-secret');
  const raw = await store.bucket('settings').get<Record<string, string>>('sec');
  assert.ok(box.isSealed(raw!.pw));
  assert.ok(!JSON.stringify(raw).includes('hunter2'));
  const again = make('sec');
  await again.load();
  assert.equal(again.get('pw'), 'hunter2-secret');
  assert.equal((await s.update({ pw: '' })).pw, 'unset');
});

/** low ≤ high: names whichever of the two was sent (low when both or neither). */
const lowHigh: SettingsRule = {
  keys: ['low', 'high'],
  check: (values, given) =>
    Number(values.low) > Number(values.high)
      ? { key: given.has('low') || !given.has('high') ? 'low' : 'high', message: 'low must not exceed high' }
      : undefined,
};

function ranged(key: string, bucket?: string): SettingsService {
  return new SettingsService(store, box, key, bucket)
    .define('low', { default: '1', description: 'low', validate: v.nonNegativeInt(100) })
    .define('high', { default: '5', description: 'high', validate: v.nonNegativeInt(100) })
    .define('pw', { default: '', description: 'secret', validate: v.text(64), secret: true, verbatim: true })
    .rule(lowHigh);
}

test('a rule over two keys: 400 naming the key sent, nothing written, no listener; the whole record is checked', async () => {
  const s = ranged('rule');
  await s.load();
  let calls = 0;
  s.onChange(() => calls++);
  await assert.rejects(s.update({ low: '9' }), badField('low'));
  await assert.rejects(s.update({ high: '0' }), badField('high'));
  await assert.rejects(s.update({ high: '3', low: '4' }), badField('low'));
  assert.equal(await store.bucket('settings').get('rule'), undefined, 'nothing written');
  assert.equal(calls, 0);
  // Both keys moved together: valid as a whole although each alone would break the rule.
  assert.deepEqual([(await s.update({ low: '50', high: '60' })).low, s.get('high')], ['50', '60']);
  assert.equal(calls, 1);
});

test('rule(): an undefined key or defaults that break it are programming errors', () => {
  assert.throws(() => new SettingsService(store, box, 'x').rule(lowHigh), /undefined key: low/);
  const inverted = new SettingsService(store, box, 'x')
    .define('low', { default: '9', description: 'low', validate: v.nonNegativeInt(100) })
    .define('high', { default: '5', description: 'high', validate: v.nonNegativeInt(100) });
  assert.throws(() => inverted.rule(lowHigh), /defaults break a settings rule/);
});

test('load: a stored record breaking a rule has the named key, then the rule keys, reset to defaults, logged', async () => {
  await store.bucket('settings').put('broken', { low: '70', high: '60' });
  const logged: string[] = [];
  const s = ranged('broken');
  await s.load({ error: (o) => logged.push((o as { setting: string }).setting) });
  assert.deepEqual([s.get('low'), s.get('high')], ['1', '60'], 'the named key reset, the other kept');
  assert.deepEqual(logged, ['low']);
  await store.bucket('settings').put('broken2', { high: '0' });
  logged.length = 0;
  const t = ranged('broken2');
  await t.load({ error: (o) => logged.push((o as { setting: string }).setting) });
  assert.deepEqual([t.get('low'), t.get('high')], ['1', '5'], 'the key the rule names is the stored one');
  assert.deepEqual(logged, ['high']);
});

test('a verbatim secret keeps its spaces; a record may live in another bucket', async () => {
  const s = ranged('cfg', 'OTHER');
  await s.load();
  await s.update({ pw: ' spaced pw ' });
  assert.equal(s.get('pw'), ' spaced pw ');
  const raw = await store.bucket('OTHER').get<Record<string, string>>('cfg');
  assert.ok(box.isSealed(raw!.pw!));
  const again = ranged('cfg', 'OTHER');
  await again.load();
  assert.equal(again.get('pw'), ' spaced pw ');
});
