/**
 * Writes `n` url monitors at 1MIN straight into a store (LMDB path or any StoreConfig; 5,000 per batch), as the
 * monitor service stores them — much faster than creating them through the API. bench:scheduler, bench:start,
 * bench:cluster and the cluster proof test (test/e2e/cluster-proof.test.ts) use it.
 */
import { openStore, type StoreConfig } from '../../src/core/storage/open-store.js';
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
}

/** The name of monitor j. */
export const seededName = (prefix: string, j: number): string => `${prefix}-${j}`;

export async function seedUrlMonitors(store: string | StoreConfig, n: number, o: SeedOptions): Promise<void> {
  const kv = await openStore(typeof store === 'string' ? { driver: 'lmdb', path: store } : store);
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
