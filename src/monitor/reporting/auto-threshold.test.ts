import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAutoThresholds } from './auto-threshold.js';
import { fixture, silent } from '../history/history.kit.js';
import { HOUR_MS } from '../../core/time.js';

const T0 = Date.UTC(2026, 0, 10, 0, 0);

test('auto thresholds: median + k·MAD with floors, minimum samples, range setting, off clears', async () => {
  const now = T0 + 10 * 24 * HOUR_MS;
  const f = await fixture({}, now);
  try {
    const settings = new Map<string, string>([
      ['autoThreshold', 'true'],
      ['autoThresholdRange', '24'],
    ]);
    // Flat history: 100 ms every minute for the last 24 h → floors apply (d = 0).
    for (let i = 0; i < 24 * 60; i++)
      f.history.append('url', 'flat', { ts: now - 1 - i * 60_000, status: 'OK', responseTimeMs: 100 });
    // Noisy history: 100 ± 20 ms (MAD 20) → m + k·d wins over the floors for Min (160 > 150).
    for (let i = 0; i < 24 * 60; i++) {
      f.history.append('url', 'noisy', {
        ts: now - 1 - i * 60_000,
        status: 'OK',
        responseTimeMs: [80, 100, 120][i % 3]!,
      });
    }
    // Too few samples.
    for (let i = 0; i < 10; i++)
      f.history.append('tcp', 'few', { ts: now - 1 - i * 60_000, status: 'OK', responseTimeMs: 5 });
    // Old samples outside a 24 h range.
    for (let i = 0; i < 100; i++)
      f.history.append('tcp', 'old', { ts: now - 5 * 24 * HOUR_MS - i * 60_000, status: 'OK', responseTimeMs: 5 });
    // A type declaring autoThresholds: false (sys) gets none, however much history it has.
    for (let i = 0; i < 100; i++)
      f.history.append('sys', 'host', { ts: now - 1 - i * 60_000, status: 'OK', responseTimeMs: 5 });
    await f.history.flush();
    const auto = createAutoThresholds({
      history: f.history,
      log: silent,
      settings: { get: (k) => settings.get(k) },
      clock: () => now,
      skip: (dbname) => dbname === 'sys',
    });
    assert.equal(await auto.recompute(), 2);
    const flat = auto.get('url', 'flat')!;
    assert.deepEqual([flat.threshMin, flat.threshMaj, flat.threshCri, flat.samples], [150, 200, 300, 1440]);
    const noisy = auto.get('url', 'noisy')!;
    assert.ok(noisy.madMs > 15 && noisy.madMs < 25, `mad ${noisy.madMs}`);
    assert.ok(noisy.threshMin > 150 && noisy.threshMin < noisy.threshMaj && noisy.threshMaj < noisy.threshCri);
    assert.equal(auto.get('tcp', 'few'), undefined);
    assert.equal(auto.get('tcp', 'old'), undefined);
    assert.equal(auto.get('sys', 'host'), undefined);
    settings.set('autoThresholdRange', '168');
    assert.equal(await auto.recompute(), 3);
    assert.equal(auto.get('tcp', 'old')!.threshMin, 25); // 5 ms flat → m + 20
    settings.set('autoThreshold', 'false');
    await auto.recompute();
    assert.equal(auto.get('url', 'flat'), undefined);
  } finally {
    await f.cleanup();
  }
});
