import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import sysDefault, { createSysType, sysType } from './sys.js';
import type { CheckContext } from './types.js';
import { makeCheckContext } from './lib/check-context.kit.js';

function ctx(timeoutMs = 3000): CheckContext {
  return makeCheckContext({ timeoutMs });
}

test('exports and shape', () => {
  assert.equal(sysDefault, sysType);
  assert.equal(sysType.id, 'sys');
  assert.deepEqual(sysType.required, []);
  assert.deepEqual(Object.keys(sysType.fields.properties), []);
});

test('a live check reads /proc: up, percentages in range, thresholdValue = highest utilisation', async () => {
  const t = createSysType({ cpuSampleMs: 100 });
  const r = await t.check({ name: 'sys1', type: 'sys' }, ctx());
  assert.equal(r.outcome, 'up', r.message);
  const m = r.metrics!;
  for (const k of ['cpuPct', 'memUsedPct', 'swapUsedPct', 'maxDiskUsedPct'])
    assert.ok(m[k]! >= 0 && m[k]! <= 100, `${k}=${m[k]}`);
  assert.ok(m['diskUsedPct:/'] !== undefined, JSON.stringify(m));
  assert.ok(m.load1! >= 0 && m.load5! >= 0 && m.load15! >= 0);
  assert.equal(r.thresholdValue, Math.max(m.cpuPct!, m.memUsedPct!, m.swapUsedPct!, m.maxDiskUsedPct!));
  // A second check right away reuses the previous CPU sample as its window start.
  const r2 = await t.check({ name: 'sys1', type: 'sys' }, ctx());
  assert.equal(r2.outcome, 'up');
});

test('no /proc → exception, not a throw', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sys-'));
  try {
    const r = await createSysType({ procRoot: dir, cpuSampleMs: 1 }).check({ name: 's' }, ctx());
    assert.equal(r.outcome, 'exception');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
