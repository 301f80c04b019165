/**
 * The start-up audit of stored configurations (stored-config-audit.ts): a configuration this version refuses is
 * counted and logged, and the audit keeps no run config behind it — a monitor never run here holds no decrypted secret
 * (checked in a heap snapshot of this process; before, every audited monitor kept its run config with its secrets).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createSecretBox, type SecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { takeHeapSnapshot, type HeapSnapshot } from '../../../test/support/heap-snapshot.kit.js';
import { apiType } from '../monitor-types/api.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import { MonitorsRepo } from './monitors.repo.js';
import { MonitorsService } from './monitors.service.js';
import { auditStoredConfigs } from './stored-config-audit.js';

/** Stores an api monitor whose basic-auth password is sealed; returns the password (made here, kept by the caller). */
async function storeWithSecret(repo: MonitorsRepo, box: SecretBox, name: string, pattern: string): Promise<string> {
  const password = `pw-${crypto.randomBytes(12).toString('hex')}`;
  await repo.put({
    name,
    type: 'api',
    createdMs: 1,
    updatedMs: 1,
    config: {
      api: 'http://127.0.0.1:9/',
      typeApi: 'GET',
      pattern,
      basicAuthUser: 'probe',
      basicAuthPwd: box.encrypt(password),
      sched: '5MIN',
      state: 'on',
    },
  });
  return password;
}

test('the audit counts a refused configuration and keeps no decrypted secret of the monitors it read', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'config-audit-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  try {
    const box = createSecretBox(crypto.randomBytes(32));
    const repo = new MonitorsRepo(store);
    const svc = new MonitorsService(repo, new Map<DbName, MonitorType>([['api', apiType]]), box);
    // The passwords are kept as hashes only, so that the heap holds their text only where the service put it.
    const digest = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
    const okHash = digest(await storeWithSecret(repo, box, 'fine', 'ok'));
    const badHash = digest(await storeWithSecret(repo, box, 'refused', '(?<=a)b'));
    const warned: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => warned.push(line) });
    assert.equal(await auditStoredConfigs(svc, new Map([['api', apiType]]), log), 1);
    assert.equal(warned.length, 1);
    assert.match(warned[0]!, /"monitor":"refused"/);
    assert.doesNotMatch(warned.join(), /pw-/, 'no secret in the log');

    const plaintexts = (heap: HeapSnapshot, hash: string) =>
      heap.stringsMatching(/^pw-[0-9a-f]{24}$/).filter((s) => digest(s) === hash).length;
    const heap = await takeHeapSnapshot();
    assert.equal(plaintexts(heap, okHash), 0, 'the audit left no decrypted password of "fine"');
    assert.equal(plaintexts(heap, badHash), 0);
    // A run's config is kept (every run of the monitor shares it), its password decrypted: the search finds it.
    assert.ok(svc.plainConfig(repo.get('fine')!).basicAuthPwd);
    assert.equal(plaintexts(await takeHeapSnapshot(), okHash), 1);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
