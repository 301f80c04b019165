/** Agent store migrations: format-1 records read back correctly after them (docs/storage.md "Adding a migration"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openSecretBox } from '../core/secrets/secret-box.js';
import { openLmdbStore } from '../core/storage/lmdb-store.js';
import { AGENT_MIGRATIONS } from './migrations.js';
import { AgentSettings } from './settings.js';

test('2026-11-26-agent-smtp-password-key moves the sealed password to smtpPwd, idempotently', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agent-mig-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  try {
    const box = openSecretBox(dir, 'agent');
    const m = AGENT_MIGRATIONS.find((x) => x.id === '2026-11-26-agent-smtp-password-key')!;
    const ctx = { store, dataDir: dir, service: 'agent', log: pino({ level: 'silent' }) };
    await m.up(ctx); // no record yet: nothing to do
    assert.equal(await store.bucket('SETTINGS').get('smtp'), undefined);
    const v1 = { smtpEnabled: 'true', smtpServerName: 'mx.test', smtpPort: '25', smtpPwdSealed: box.encrypt(' pw ') };
    await store.bucket('SETTINGS').put('smtp', v1);
    await m.up(ctx);
    await m.up(ctx);
    const { smtpPwdSealed, ...rest } = v1;
    assert.deepEqual(await store.bucket('SETTINGS').get('smtp'), { ...rest, smtpPwd: smtpPwdSealed });
    const a = new AgentSettings(store, box);
    await a.load();
    assert.deepEqual([a.smtpPublic().smtpPort, a.smtpWithSecret().smtpPwd], ['25', ' pw ']);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
