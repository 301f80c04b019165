/**
 * Bench support: writes `n` url monitors at 1MIN straight into an LMDB store (5,000 per batch), as the monitor
 * service stores them — much faster than creating them through the API. bench:scheduler and bench:start use it.
 */
import { openStore } from '../src/core/storage/open-store.js';
import type { StoredMonitor } from '../src/monitor/monitors/monitors.repo.js';

export interface SeedOptions {
  /** Monitor names are `<prefix>-<j>`, display names `<prefix> <j>`. */
  prefix: string;
  /** The target URL of monitor j. */
  url: (j: number) => string;
  /** The check timeout in seconds (a string, as stored). */
  timeout: string;
  probe?: string;
}

export async function seedUrlMonitors(storePath: string, n: number, o: SeedOptions): Promise<void> {
  const store = await openStore({ driver: 'lmdb', path: storePath });
  const now = Date.now();
  for (let i = 0; i < n; i += 5000) {
    const ops = [];
    for (let j = i; j < Math.min(n, i + 5000); j++) {
      const m: StoredMonitor = {
        name: `${o.prefix}-${j}`,
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
        },
      };
      ops.push({ type: 'put' as const, bucket: 'monitors', key: m.name, value: m });
    }
    await store.batch(ops);
  }
  await store.close();
}
