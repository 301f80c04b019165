/**
 * Writes `n` url monitors at 1MIN straight into a store (LMDB path or any StoreConfig; 5,000 per batch), as the
 * monitor service stores them — much faster than creating them through the API. bench:scheduler, bench:start,
 * bench:cluster and the cluster proof test (test/e2e/cluster-proof.test.ts) use it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { openStore, type StoreConfig } from '../../src/core/storage/open-store.js';
import { migrateStore } from '../../src/core/storage/migrations.js';
import { withCoreMigrations } from '../../src/core/platform/core-migrations.js';
import { MONITOR_FORMATS, MONITOR_MIGRATIONS } from '../../src/monitor/migrations.js';
import type { StoredMonitor } from '../../src/monitor/monitors/monitors.repo.js';

export interface SeedOptions {
  /** Monitor names are `<prefix>-<j>`, display names `<prefix> <j>`. */
  prefix: string;
  /** The first j (default 0): monitors from … from + n − 1. */
  from?: number;
  /** The target URL of monitor j. */
  url: (j: number) => string;
  /** The check timeout in seconds (a string, as stored). */
  timeout: string;
  probe?: string;
  /** More stored fields for every monitor (e.g. notifyStatus). */
  extra?: Record<string, string>;
  /**
   * Mark the store as this build's format first (every migration applied to the empty store), as a store this version
   * created and then filled through the API: the service starts without migrating (and backing up) the seeded
   * monitors. Without it the seeded store looks like one from before the first migration, and the first process on it
   * migrates them all: a one-off upgrade step inside what a bench means to measure (decision 185).
   */
  current?: boolean;
}

/** The name of monitor j. */
export const seededName = (prefix: string, j: number): string => `${prefix}-${j}`;

export async function seedUrlMonitors(store: string | StoreConfig, n: number, o: SeedOptions): Promise<void> {
  const kv = await openStore(typeof store === 'string' ? { driver: 'lmdb', path: store } : store);
  if (o.current) await markCurrent(kv);
  const now = Date.now();
  const from = o.from ?? 0;
  for (let i = from; i < from + n; i += 5000) {
    const ops = [];
    for (let j = i; j < Math.min(from + n, i + 5000); j++) {
      const m: StoredMonitor = {
        name: seededName(o.prefix, j),
        type: 'url',
        createdMs: now,
        updatedMs: now,
        config: {
          display_name: `${o.prefix} ${j}`,
          sched: '1MIN',
          state: 'on',
          ...(o.probe ? { probe: o.probe } : {}),
          url: o.url(j),
          timeout: o.timeout,
          ...o.extra,
        },
      };
      ops.push({ type: 'put' as const, bucket: 'monitors', key: m.name, value: m });
    }
    await kv.batch(ops);
  }
  await kv.close();
}

/** Runs the monitor service's migrations on the (empty) store: it then holds this build's format record. */
async function markCurrent(kv: Awaited<ReturnType<typeof openStore>>): Promise<void> {
  if ((await kv.buckets()).some((b) => b.keys > 0)) throw new Error('seed: `current` needs an empty store');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'seed-migrate-'));
  try {
    await migrateStore(kv, {
      ...withCoreMigrations(MONITOR_MIGRATIONS, MONITOR_FORMATS),
      dataDir,
      service: 'monitor',
      log: pino({ level: 'silent' }),
      writtenBy: 'seed-monitors.kit',
    });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
