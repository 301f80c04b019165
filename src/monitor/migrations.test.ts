/** Monitor store migrations: format-1 records read back correctly after them (docs/storage.md "Adding a migration"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openSecretBox } from '../core/secrets/secret-box.js';
import { openLmdbStore } from '../core/storage/lmdb-store.js';
import { MONITOR_MIGRATIONS } from './migrations.js';
import { CertInventory } from './certificates/cert-inventory.js';
import { createApiType } from './monitor-types/api.js';
import { createRegexRunner } from './monitor-types/lib/safe-regex.js';
import type { DbName, MonitorType } from './monitor-types/types.js';
import { MonitorsRepo, type StoredMonitor } from './monitors/monitors.repo.js';
import { MonitorsService } from './monitors/monitors.service.js';

test('2026-11-26-monitors-embedded-credentials seals userinfo and header values of format-1 records, idempotently', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'monitor-mig-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  const regex = createRegexRunner();
  try {
    const v1: StoredMonitor = {
      name: 'old-api',
      type: 'api',
      createdMs: 1,
      updatedMs: 1,
      config: { api: 'https://u:S3cr3t@h.example/x', headers: 'X-Api-Key:K-123456,Accept:a', sched: '5MIN' },
    };
    const plainTcp: StoredMonitor = {
      name: 't',
      type: 'tcp',
      createdMs: 1,
      updatedMs: 1,
      config: { ip: 'h', port: '1' },
    };
    await store.bucket('monitors').put(v1.name, v1);
    await store.bucket('monitors').put(plainTcp.name, plainTcp);
    const m = MONITOR_MIGRATIONS.find((x) => x.id === '2026-11-26-monitors-embedded-credentials')!;
    const ctx = { store, dataDir: dir, service: 'monitor', log: pino({ level: 'silent' }) };
    await m.up(ctx);
    const once = await store.bucket('monitors').get<StoredMonitor>('old-api');
    await m.up(ctx);
    const twice = await store.bucket('monitors').get<StoredMonitor>('old-api');
    assert.deepEqual(twice, once, 'a second run changes nothing');
    assert.ok(!JSON.stringify(once).includes('S3cr3t') && !JSON.stringify(once).includes('K-123456'));
    assert.equal(once!.config.sched, '5MIN');
    assert.deepEqual(await store.bucket('monitors').get('t'), plainTcp, 'other types untouched');
    const repo = new MonitorsRepo(store);
    await repo.load();
    const svc = new MonitorsService(
      repo,
      new Map<DbName, MonitorType>([['api', createApiType({ regex })]]),
      openSecretBox(dir, 'monitor'),
    );
    const stored = repo.get('old-api')!;
    assert.equal(svc.plainConfig(stored).api, 'https://u:S3cr3t@h.example/x');
    assert.equal(svc.plainConfig(stored).headers, 'X-Api-Key:K-123456,Accept:a');
    assert.equal(svc.view(stored).api, 'https://u:***@h.example/x');
    assert.equal(svc.view(stored).headers, 'X-Api-Key:***,Accept:a');
  } finally {
    await regex.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('2026-11-26-certificates-per-monitor turns format-1 certificate records into one record per monitor, idempotently', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'monitor-mig-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  try {
    const facts = { subject: 'example.com', issuer: 'CA', validFromMs: 1000, validToMs: 9_000_000, keyType: 'EC' };
    const v1 = {
      v: 1,
      ...facts,
      fingerprint256: 'AA:BB',
      firstSeenMs: 500,
      lastSeenMs: 2000,
      monitors: [
        { name: 'site', type: 'url', host: 'example.com', lastSeenMs: 2000 },
        { name: 'smtp', type: 'tcp', host: 'mail.example.com', lastSeenMs: 1500 },
      ],
    };
    await store.bucket('certificates').put('AA:BB', v1);
    const m = MONITOR_MIGRATIONS.find((x) => x.id === '2026-11-26-certificates-per-monitor')!;
    const ctx = { store, dataDir: dir, service: 'monitor', log: pino({ level: 'silent' }) };
    await m.up(ctx);
    const once: unknown[] = [];
    for await (const e of store.bucket('certificates').range()) once.push(e);
    await m.up(ctx);
    const twice: unknown[] = [];
    for await (const e of store.bucket('certificates').range()) twice.push(e);
    assert.deepEqual(twice, once, 'a second run changes nothing');
    assert.deepEqual(
      once.map((e) => (e as { key: string }).key),
      ['site', 'smtp'],
    );
    const inv = new CertInventory(store, (e) => assert.fail(String(e)));
    await inv.load();
    const [entry] = inv.list(3000);
    assert.deepEqual(
      { ...entry, daysLeft: undefined, level: undefined },
      {
        ...facts,
        fingerprint256: 'AA:BB',
        firstSeenMs: 500,
        lastSeenMs: 2000,
        monitors: v1.monitors,
        daysLeft: undefined,
        level: undefined,
      },
      'the inventory reads back what format 1 held',
    );
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
