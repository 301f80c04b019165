import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startVaultKv2, type VaultKv2 } from '../../../../test/support/vault-kv2.fixture.js';
import { TemplateError } from './templates.js';
import { createVaultClient, vaultConfigFrom, type VaultConfig } from './vault-client.js';

let vault: VaultKv2;
let cfg: VaultConfig;

before(async () => {
  vault = await startVaultKv2({
    token: 's.tok',
    secrets: {
      secret: { 'app/db': [{ password: 'old' }, { password: 'hunter22', port: 5432 }] },
      kv: { x: [{ a: 'b' }] },
    },
  });
  cfg = { addr: vault.addr, token: 's.tok', caPem: vault.caPem };
});
after(() => vault.close());

test('reads the latest version over HTTPS with the documented path and header', async () => {
  const c = createVaultClient();
  assert.equal(await c.read(cfg, 'secret/app/db', 'password'), 'hunter22');
  assert.equal(await c.read(cfg, 'secret/app/db', 'port'), '5432');
  assert.equal(await c.read(cfg, 'kv/x', 'a'), 'b');
  assert.deepEqual(
    vault.requests.slice(-2).map((r) => r.path),
    ['/v1/secret/data/app/db', '/v1/kv/data/x'],
  );
  assert.equal(c.requests, 2, 'second key of the same secret comes from the cache');
});

test('the cache expires after its TTL', async () => {
  let now = 1_000;
  const c = createVaultClient({ cacheTtlMs: 30_000, now: () => now });
  await c.read(cfg, 'secret/app/db', 'password');
  now += 29_000;
  await c.read(cfg, 'secret/app/db', 'password');
  assert.equal(c.requests, 1);
  now += 2_000;
  await c.read(cfg, 'secret/app/db', 'password');
  assert.equal(c.requests, 2);
});

test('errors are TemplateErrors without the token', async () => {
  const cases: [VaultConfig, string, string, RegExp][] = [
    [{ ...cfg, token: 'bad-token' }, 'secret/app/db', 'password', /HTTP 403 \(permission denied\)/],
    [cfg, 'secret/nope', 'password', /HTTP 404/],
    [cfg, 'secret/app/db', 'user', /no key "user"/],
    [{ ...cfg, caPem: undefined }, 'secret/app/db', 'password', /SELF_SIGNED|UNABLE_TO_VERIFY|DEPTH_ZERO/],
    [{ ...cfg, addr: 'https://127.0.0.1:1' }, 'secret/app/db', 'password', /ECONNREFUSED/],
  ];
  for (const [conf, path, key, re] of cases) {
    const c = createVaultClient();
    await assert.rejects(
      c.read(conf, path, key),
      (e: unknown) => e instanceof TemplateError && re.test(e.message) && !e.message.includes(conf.token),
      String(re),
    );
  }
});

test('config comes from settings vaultAddr/vaultCaCert and secret vaultToken', async () => {
  const settings = new Map([
    ['vaultAddr', vault.addr],
    ['vaultCaCert', vault.caPem],
  ]);
  const got = await vaultConfigFrom(
    { get: (k) => settings.get(k) },
    { get: async (n) => (n === 'vaultToken' ? 's.tok' : undefined) },
  );
  assert.equal(got.token, 's.tok');
  await assert.rejects(vaultConfigFrom({ get: () => undefined }, { get: async () => 'x' }), /vaultAddr is not set/);
  await assert.rejects(vaultConfigFrom({ get: (k) => settings.get(k) }, { get: async () => undefined }), /vaultToken/);
});
