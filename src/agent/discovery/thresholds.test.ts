import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { openLmdbStore, type LmdbStore } from '../../core/storage/lmdb-store.js';
import { defaultSettings } from '../settings.js';
import {
  computeAllBaselines,
  computeBaseline,
  fixedThresholds,
  groupOfKey,
  levelOf,
  MIN_BASELINE_SAMPLES,
  thresholdsFor,
  type Baseline,
} from './thresholds.js';

let dir: string;
let store: LmdbStore;
before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'agent-thr-'));
  store = await openLmdbStore({ path: dir, noSync: true });
});
after(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('levelOf: each level at its bound, unset levels skipped', () => {
  const t = { min: 10, maj: 20, cri: 30, source: 'fixed' as const };
  assert.equal(levelOf(9.99, t), 'OK');
  assert.equal(levelOf(10, t), 'MINOR');
  assert.equal(levelOf(20, t), 'MAJOR');
  assert.equal(levelOf(30, t), 'CRITICAL');
  assert.equal(levelOf(1e9, { cri: 50, source: 'fixed' }), 'CRITICAL');
  assert.equal(levelOf(40, { cri: 50, source: 'fixed' }), 'OK');
  assert.equal(levelOf(1e9, { source: 'none' }), 'OK');
});

test('fixed thresholds win over a baseline; the baseline is used only when all three are unset', () => {
  const s = defaultSettings();
  const baseline: Baseline = {
    min: 1,
    maj: 2,
    cri: 3,
    median: 0.5,
    mad: 0.1,
    samples: 40,
    computedAtMs: 0,
    method: 'median+k*MAD',
  };
  assert.deepEqual(thresholdsFor(s, 'CPU', baseline), { min: 80, maj: 90, cri: 95, source: 'fixed' });
  // A partly set group is still fixed (the unset level is skipped).
  assert.deepEqual(fixedThresholds({ ...s, discoCPUGFixedThreshMin: '', discoCPUGFixedThreshMaj: '' }, 'CPU'), {
    min: undefined,
    maj: undefined,
    cri: 95,
    source: 'fixed',
  });
  const unset = { ...s, discoCPUGFixedThreshMin: '', discoCPUGFixedThreshMaj: '', discoCPUGFixedThreshCri: '' };
  assert.equal(fixedThresholds(unset, 'CPU'), undefined);
  assert.deepEqual(thresholdsFor(unset, 'CPU', baseline), { min: 1, maj: 2, cri: 3, source: 'auto' });
  assert.deepEqual(thresholdsFor(unset, 'CPU', undefined), { source: 'none' });
  // LOAD, PROC and PORT have no fixed defaults: a baseline applies out of the box.
  assert.equal(thresholdsFor(s, 'LOAD', baseline).source, 'auto');
});

test('computeBaseline: minimum samples, median + k·MAD, robust to outliers', () => {
  const vals = Array.from({ length: MIN_BASELINE_SAMPLES - 1 }, (_, i) => i);
  assert.equal(computeBaseline(vals, 'CPU', 1), undefined, 'one sample short');
  vals.push(29);
  const b = computeBaseline(vals, 'LOAD', 123)!;
  assert.ok(b);
  assert.equal(b.samples, 30);
  assert.equal(b.median, 14.5);
  assert.equal(b.mad, 7.5);
  const sigma = 1.4826 * 7.5;
  assert.equal(b.min, Math.round((14.5 + 3 * sigma) * 100) / 100);
  assert.equal(b.maj, Math.round((14.5 + 4.5 * sigma) * 100) / 100);
  assert.equal(b.cri, Math.round((14.5 + 6 * sigma) * 100) / 100);
  assert.equal(b.computedAtMs, 123);
  // A few huge outliers barely move the median and MAD.
  const noisy = [...Array.from({ length: 40 }, () => 10), 10_000, 20_000, 30_000];
  const nb = computeBaseline(noisy, 'LOAD', 0)!;
  assert.equal(nb.median, 10);
  assert.ok(nb.cri < 11, JSON.stringify(nb));
});

test('computeBaseline: a flat history still gets a band (floor), percentage groups are capped at 100', () => {
  const flat = computeBaseline(Array(50).fill(50), 'MEM', 0)!;
  assert.equal(flat.mad, 0);
  // σ̂ floored at 1 % of the median = 0.5.
  assert.deepEqual([flat.min, flat.maj, flat.cri], [51.5, 52.25, 53]);
  const zero = computeBaseline(Array(50).fill(0), 'PORT', 0)!;
  // σ̂ floored at 0.01.
  assert.deepEqual([zero.min, zero.maj, zero.cri], [0.03, 0.05, 0.06]);
  assert.ok(zero.min > 0, 'a value above a flat zero history is not OK');
  const high = computeBaseline([...Array(30).fill(90), ...Array(30).fill(99)], 'CPU', 0)!;
  assert.ok(high.min <= 100 && high.maj <= 100 && high.cri === 100, JSON.stringify(high));
  const raw = computeBaseline([...Array(30).fill(90), ...Array(30).fill(99)], 'LOAD', 0)!;
  assert.ok(raw.cri > 100, 'raw groups are not capped');
});

test('groupOfKey: the metric key naming of watch.ts', () => {
  assert.equal(groupOfKey('system_cpu'), 'CPU');
  assert.equal(groupOfKey('system_mem'), 'MEM');
  assert.equal(groupOfKey('system_swap'), 'SWAP');
  assert.equal(groupOfKey('system_load5'), 'LOAD');
  assert.equal(groupOfKey('disk_/'), 'DISK');
  assert.equal(groupOfKey('port_8080'), 'PORT');
  assert.equal(groupOfKey('nginx_cpu'), 'PROC');
  assert.equal(groupOfKey('nginx_mem'), 'PROC');
  assert.equal(groupOfKey('nginx_count'), undefined);
  assert.equal(groupOfKey('port_8080_listening'), undefined);
});

test('computeAllBaselines: only monitored keys with enough samples in the window; stored in THRESHOLDS', async () => {
  const nowMs = 10 * 86_400_000;
  const ops = [];
  for (let i = 0; i < 40; i++) {
    ops.push({
      type: 'put' as const,
      bucket: 'METRICS',
      key: ['system_load1', nowMs - i * 60_000],
      value: 1 + (i % 3) * 0.1,
    });
    ops.push({ type: 'put' as const, bucket: 'METRICS', key: ['app_count', nowMs - i * 60_000], value: 1 });
    if (i < 10) ops.push({ type: 'put' as const, bucket: 'METRICS', key: ['port_22', nowMs - i * 60_000], value: 3 });
    // Outside the 7-day window: not counted.
    ops.push({ type: 'put' as const, bucket: 'METRICS', key: ['system_mem', nowMs - 8 * 86_400_000 - i], value: 40 });
  }
  await store.batch(ops);
  const r = await computeAllBaselines(store, { nowMs });
  assert.deepEqual(Object.keys(r.computed), ['system_load1']);
  assert.deepEqual(r.skipped, { port_22: 10 });
  const stored = await store.bucket('THRESHOLDS').get<Baseline>('system_load1');
  assert.deepEqual(stored, r.computed.system_load1);
  assert.equal(stored?.samples, 40);
  assert.equal(await store.bucket('THRESHOLDS').get('app_count'), undefined);
});
