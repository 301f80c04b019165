/**
 * A cluster member's index of its monitors by lease key (probe group, shard; cluster/shards.ts), with the count of
 * enabled monitors under each key. When the held set changes, the engine re-syncs only the monitors of the shards
 * that changed hands and takes the dispatch window's counts from the per-key counts, instead of a pass over every
 * monitor (which parsed every schedule again: 150–230 ms of the event loop per ownership change at 50,000 monitors,
 * on every member; bench:ownership). Alerting loads the alert states of won shards from it too. Kept by the
 * monitors repo with its map (monitors.repo.ts `shardIndex`).
 */
import { groupOf, shardOf } from '../cluster/shards.js';

export interface ShardEntry {
  readonly group: string;
  readonly shard: number;
  readonly names: Set<string>;
  /** How many of `names` are enabled (state on). */
  enabled: number;
}

interface Placed {
  entry: ShardEntry;
  enabled: boolean;
}

export class ShardIndex {
  private readonly byKey = new Map<string, ShardEntry>();
  private readonly placed = new Map<string, Placed>();

  /** Records (or moves) a monitor; a name's shard never changes, its probe group and state may. */
  set(name: string, probe: string | undefined, enabled: boolean): void {
    const group = groupOf(probe);
    const was = this.placed.get(name);
    if (was && was.entry.group === group) {
      if (was.enabled !== enabled) was.entry.enabled += enabled ? 1 : -1;
      was.enabled = enabled;
      return;
    }
    if (was) this.unplace(name, was);
    const shard = shardOf(name);
    const key = `${group}\u0000${shard}`;
    let entry = this.byKey.get(key);
    if (!entry) this.byKey.set(key, (entry = { group, shard, names: new Set(), enabled: 0 }));
    entry.names.add(name);
    if (enabled) entry.enabled++;
    this.placed.set(name, { entry, enabled });
  }

  clear(): void {
    this.byKey.clear();
    this.placed.clear();
  }

  delete(name: string): void {
    const was = this.placed.get(name);
    if (was) this.unplace(name, was);
  }

  /** The monitors under (group, shard), as a copy (callers may re-sync them, which updates the index). */
  names(group: string, shard: number): string[] {
    const entry = this.byKey.get(`${group}\u0000${shard}`);
    return entry ? [...entry.names] : [];
  }

  /** Every non-empty (group, shard) with its enabled count. */
  entries(): IterableIterator<ShardEntry> {
    return this.byKey.values();
  }

  private unplace(name: string, was: Placed): void {
    was.entry.names.delete(name);
    if (was.enabled) was.entry.enabled--;
    if (was.entry.names.size === 0) this.byKey.delete(`${was.entry.group}\u0000${was.entry.shard}`);
    this.placed.delete(name);
  }
}
