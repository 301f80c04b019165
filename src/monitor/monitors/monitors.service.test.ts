import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { apiType } from '../monitor-types/api.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import { MonitorsRepo } from './monitors.repo.js';
import { MonitorsService } from './monitors.service.js';

test('an api record stored before threshOn existed keeps its meaning (response time), also through an update', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'monitors-svc-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  try {
    const repo = new MonitorsRepo(store);
    const svc = new MonitorsService(
      repo,
      new Map<DbName, MonitorType>([['api', apiType]]),
      createSecretBox(crypto.randomBytes(32)),
    );
    // As the code before threshOn wrote it: pattern + thresholds in ms, no threshOn.
    await repo.put({
      name: 'legacy',
      type: 'api',
      createdMs: 1,
      updatedMs: 1,
      config: {
        api: 'http://127.0.0.1:9/',
        typeApi: 'GET',
        pattern: '(\\d+)',
        threshCri: '500',
        sched: '5MIN',
        state: 'off',
      },
    });
    const legacy = repo.get('legacy')!;
    assert.equal(svc.plainConfig(legacy).threshOn, 'responseTime');
    assert.equal(apiType.thresholdsOn!(svc.plainConfig(legacy)), 'responseTime');
    assert.equal(svc.view(legacy).threshOn, 'responseTime');
    const updated = await svc.update('api', '5MIN', 'legacy', { display_name: 'renamed' });
    assert.equal(updated.config.threshOn, 'responseTime', 'an unrelated update does not change what thresholds mean');
    const fresh = await svc.create('api', {
      name: 'fresh',
      api: 'http://127.0.0.1:9/',
      pattern: '(\\d+)',
      state: 'off',
    });
    assert.equal(fresh.config.threshOn, 'value');
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
