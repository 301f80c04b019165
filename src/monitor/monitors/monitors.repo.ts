/**
 * Monitor definitions in the `monitors` bucket (key = name, unique across types), mirrored in memory: the scheduler,
 * the runner and GET /monitors read the map; writes go through to the store.
 */
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import type { DbName } from '../monitor-types/types.js';

export interface StoredMonitor {
  name: string;
  type: DbName;
  /** Every field as a string, secrets sealed by the secret box. */
  config: Record<string, string>;
  createdMs: number;
  updatedMs: number;
  /** Who created the monitor and who last changed it (user names); absent in records written before they existed. */
  createdBy?: string;
  updatedBy?: string;
}

export class MonitorsRepo {
  private readonly bucket: Bucket;
  private readonly byName = new Map<string, StoredMonitor>();

  constructor(store: KvStore) {
    this.bucket = store.bucket('monitors');
  }

  async load(): Promise<void> {
    this.byName.clear();
    for await (const { value } of this.bucket.range<StoredMonitor>()) this.byName.set(value.name, value);
  }

  get(name: string): StoredMonitor | undefined {
    return this.byName.get(name);
  }

  all(): IterableIterator<StoredMonitor> {
    return this.byName.values();
  }

  get size(): number {
    return this.byName.size;
  }

  async put(m: StoredMonitor): Promise<void> {
    this.byName.set(m.name, m);
    await this.bucket.put(m.name, m);
  }

  async delete(name: string): Promise<void> {
    this.byName.delete(name);
    await this.bucket.delete(name);
  }
}
