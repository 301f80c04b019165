/**
 * Monitor definitions in the `monitors` bucket (key = name, unique across types), mirrored in memory: the scheduler,
 * the runner and GET /monitors read the map; writes go through to the store. `follow` keeps the map current with the
 * changes other instances store (a cluster: docs/cluster.md).
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

/** A monitor another instance created or changed (`m`), or deleted (undefined). */
export type RemoteChange = (name: string, m: StoredMonitor | undefined) => void;

export class MonitorsRepo {
  private readonly bucket: Bucket;
  private readonly byName = new Map<string, StoredMonitor>();

  constructor(private readonly store: KvStore) {
    this.bucket = store.bucket('monitors');
  }

  async load(): Promise<void> {
    const next: StoredMonitor[] = [];
    for await (const { value } of this.bucket.range<StoredMonitor>()) next.push(value);
    this.byName.clear();
    for (const m of next) this.byName.set(m.name, m);
  }

  /** Applies other instances' changes to the map, then reports each (call before `load`). */
  follow(onChange: RemoteChange): void {
    this.store.watch('monitors', async (k) => {
      if (k !== undefined) {
        const name = String(k);
        const m = await this.bucket.get<StoredMonitor>(name);
        if (m) this.byName.set(name, m);
        else this.byName.delete(name);
        return onChange(name, m);
      }
      const before = new Map(this.byName);
      await this.load();
      for (const name of before.keys()) if (!this.byName.has(name)) onChange(name, undefined);
      for (const [name, m] of this.byName) if (before.get(name)?.updatedMs !== m.updatedMs) onChange(name, m);
    });
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
