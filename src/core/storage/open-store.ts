/**
 * The one place that picks a KvStore driver. Everything above the store receives a `KvStore` and never names a driver.
 * Drivers are imported on demand, so a process loads only the one it uses (the pg client is ~10 MB of RSS).
 */
import type { Logger } from 'pino';
import type { KvStore } from './kv-store.js';

export type StoreConfig = { driver: 'lmdb'; path: string } | { driver: 'postgres'; url: string; namespace: string };

export async function openStore(cfg: StoreConfig, log?: Logger): Promise<KvStore> {
  switch (cfg.driver) {
    case 'lmdb':
      return (await import('./lmdb-store.js')).openLmdbStore({ path: cfg.path, log });
    case 'postgres':
      return (await import('./postgres-store.js')).openPostgresStore({ url: cfg.url, namespace: cfg.namespace, log });
    default: {
      const never: never = cfg;
      throw new Error(`unknown store driver: ${JSON.stringify(never)}`);
    }
  }
}
