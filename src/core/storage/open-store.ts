/**
 * The one place that picks a KvStore driver. Everything above the store receives a `KvStore` and never names a driver.
 */
import type { Logger } from 'pino';
import type { KvStore } from './kv-store.js';
import { openLmdbStore } from './lmdb-store.js';
import { openPostgresStore } from './postgres-store.js';

export type StoreConfig =
  | { driver: 'lmdb'; path: string }
  | { driver: 'postgres'; url: string; namespace: string };

export async function openStore(cfg: StoreConfig, log?: Logger): Promise<KvStore> {
  switch (cfg.driver) {
    case 'lmdb':
      return openLmdbStore({ path: cfg.path, log });
    case 'postgres':
      return openPostgresStore({ url: cfg.url, namespace: cfg.namespace, log });
    default: {
      const never: never = cfg;
      throw new Error(`unknown store driver: ${JSON.stringify(never)}`);
    }
  }
}
