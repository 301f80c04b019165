/**
 * The agent's first start hashes the initial admin password in a child process (decision 164): the agent process
 * has not loaded the native argon2 library when it listens, the stored hash has the service's argon2id parameters,
 * and the admin logs in with the password. A child that cannot finish in time is an error hashInitialPassword()
 * turns into hashing in the process.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { ARGON2_PARAMS, verifyPassword } from '../core/auth/passwords.js';
import { agentTestConfig, HARNESS_ADMIN_PW } from '../../test/support/agent.harness.js';
import { certsFrom, HttpsClient } from '../../test/support/https-client.kit.js';
import { createAgentService } from './service.js';
import { hashInChild } from './initial-hash.js';

const require = createRequire(import.meta.url);
const argon2Loaded = () => require.cache[require.resolve('@node-rs/argon2')] !== undefined;

test('a first start hashes the admin password outside the agent process; the admin logs in with it', async () => {
  assert.equal(argon2Loaded(), false, 'nothing in this test file loaded argon2 yet');
  const { cfg, dataDir } = agentTestConfig();
  const svc = await createAgentService(cfg, { schedule: false });
  const client = new HttpsClient(await svc.start(), certsFrom(cfg.certDir));
  try {
    assert.equal(argon2Loaded(), false, 'the agent has not loaded argon2 to create its admin user');
    const stored = (await svc.platform.store.bucket('users').get<{ passwordHash: string }>('admin'))!.passwordHash;
    const { memoryCost, timeCost, parallelism } = ARGON2_PARAMS;
    assert.match(stored, new RegExp(`^\\$argon2id\\$v=19\\$m=${memoryCost},t=${timeCost},p=${parallelism}\\$`));
    await client.login('admin', HARNESS_ADMIN_PW, '/api/auth');
  } finally {
    client.close();
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('hashInChild: a hash verifyPassword() accepts for that password only; a child out of time is an error', async () => {
  const h = await hashInChild('another-pass-123');
  assert.equal(await verifyPassword(h, 'another-pass-123'), true);
  assert.equal(await verifyPassword(h, 'another-pass-124'), false);
  await assert.rejects(hashInChild('another-pass-123', 1), /hash child exited/);
});
