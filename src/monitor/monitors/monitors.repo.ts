/**
 * Monitor definitions in the `monitors` bucket (key = name, unique across types), mirrored in memory: the scheduler,
 * the runner and GET /monitors read the map; writes go through to the store. `follow` keeps the map current with the
 * changes other instances store (a cluster: docs/cluster.md). A cluster member also asks for the monitors by lease
 * key (`shardIndex`, shard-index.ts), kept with the map from the first ask on. A definition's strings are compacted
 * as it enters the map (compact-strings.ts): kept for the life of the process, on every instance, so they must not keep
 * the record they were decoded from.
 */
import { compactStrings, StringPool } from '../../core/storage/compact-strings.js';
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import type { DbName } from '../monitor-types/types.js';
import { ShardIndex } from './shard-index.js';

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
  private shards: ShardIndex | undefined;
  /** The definitions' short values shared, long ones detached from their decoded record (compact-strings.ts). */
  private readonly strings = new StringPool();

  constructor(private readonly store: KvStore) {
    this.bucket = store.bucket('monitors');
  }

  async load(): Promise<void> {
    const next: StoredMonitor[] = [];
    for await (const { value } of this.bucket.range<StoredMonitor>()) next.push(value);
    this.byName.clear();
    this.shards?.clear();
    for (const m of next) this.setHere(m);
  }

  /** Applies other instances' changes to the map, then reports each (call before `load`). */
  follow(onChange: RemoteChange): void {
    this.store.watch('monitors', async (k) => {
      if (k !== undefined) {
        const name = String(k);
        const m = await this.bucket.get<StoredMonitor>(name);
        if (m) this.setHere(m);
        else this.deleteHere(name);
        return onChange(name, m);
      }
      const before = new Map(this.byName);
      await this.load();
      for (const name of before.keys()) if (!this.byName.has(name)) onChange(name, undefined);
      for (const [name, m] of this.byName) if (before.get(name)?.updatedMs !== m.updatedMs) onChange(name, m);
    });
  }

  /** The monitors by (probe group, shard) with enabled counts, current from now on (made on the first call). */
  shardIndex(): ShardIndex {
    if (!this.shards) {
      const index = (this.shards = new ShardIndex());
      for (const m of this.byName.values()) place(index, m);
    }
    return this.shards;
  }

  get(name: string): StoredMonitor | undefined {
    return this.byName.get(name);
  }

  /**
   * Whether the store holds a monitor `name` now: a read past the map, which may not yet have followed a monitor
   * another instance created a moment ago.
   */
  async storedNow(name: string): Promise<boolean> {
    return (await this.bucket.get(name)) !== undefined;
  }

  all(): IterableIterator<StoredMonitor> {
    return this.byName.values();
  }

  get size(): number {
    return this.byName.size;
  }

  async put(m: StoredMonitor): Promise<void> {
    this.setHere(m);
    await this.bucket.put(m.name, m);
  }

  async delete(name: string): Promise<void> {
    this.deleteHere(name);
    await this.bucket.delete(name);
  }

  private setHere(m: StoredMonitor): void {
    compactStrings(m, this.strings);
    this.byName.set(m.name, m);
    if (this.shards) place(this.shards, m);
  }

  private deleteHere(name: string): void {
    this.byName.delete(name);
    this.shards?.delete(name);
  }
}

/** A monitor's place in the shard index: its probe's group, its name's shard, enabled when its state is on. */
function place(index: ShardIndex, m: StoredMonitor): void {
  index.set(m.name, m.config.probe, m.config.state === 'on');
}
