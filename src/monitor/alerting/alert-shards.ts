/**
 * Alert state in a cluster (docs/cluster.md "Alerting"): the member holding a monitor's shard lease decides its alerts,
 * from the state in the store. On winning leases it first stamps their epochs as store fences (a former holder's
 * late writes are refused from then on), then reads the state of the won shards' monitors; a result arriving
 * meanwhile waits and is judged after the load, in order. The states of shards no longer held are dropped from memory
 * (a later win reads them again). Every state write and queued alert goes under its lease's fence. On a clean
 * release the pending writes are flushed first (Ownership.beforeRelease), so the next holder reads them.
 * Acknowledgements are records of their own (ack-records.ts): the holder applies the record naming its open problem,
 * from the change feed and when it wins the lease, and writes the state with it under its fence.
 */
import type { Logger } from 'pino';
import { isStaleFence } from '../../core/storage/claims.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import type { Lease, Ownership } from '../cluster/coordinator.js';
import type { LeaseKey } from '../cluster/cluster-store.js';
import { shardFenceKey } from '../cluster/shards.js';
import type { AlertState } from './alert-policy.js';
import { ACK_BUCKET, type AckRecord, applyAckRecord } from './ack-records.js';

export interface AlertCluster {
  ownership: Ownership;
  /** This member's id (the owner of its delivery claims). */
  memberId: string;
  ttlMs: number;
  heartbeatMs: number;
  /** A monitor's probe, or undefined when it no longer exists. */
  monitor(name: string): { probe?: string } | undefined;
  /** The monitors of (probe group, shard) (monitors/shard-index.ts: no pass over every monitor per handover). */
  namesIn(group: string, shard: number): readonly string[];
}

/** Where a monitor's alerts are decided here: its lease, which carries the fence its writes carry. */
export type HeldAt = Lease;

const LOAD_RETRIES = 5;
const FLUSH_BOUND_MS = 3000;

export class AlertShards {
  /** Shards whose states are being read: the decisions waiting for them, in arrival order. */
  private readonly loading = new Map<string, Array<() => void>>();

  constructor(
    private readonly c: AlertCluster,
    private readonly store: KvStore,
    private readonly bucket: string,
    private readonly states: Map<string, AlertState>,
    private readonly log: Logger,
    flush: () => Promise<void>,
    /** Writes a held monitor's state changed by an acknowledgement record, under its lease's fence. */
    private readonly persist: (name: string, state: AlertState, at: HeldAt) => void,
  ) {
    c.ownership.onChange((won) => {
      this.dropUnheld();
      if (won.length) void this.load(won);
    });
    c.ownership.beforeRelease(async () => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([flush(), new Promise((r) => (timer = setTimeout(r, FLUSH_BOUND_MS)))]);
      clearTimeout(timer);
    });
    store.watch(ACK_BUCKET, (key) => this.followAcks(key === undefined ? [...states.keys()] : [String(key)]));
  }

  heldAt(name: string, probe: string | undefined): HeldAt | undefined {
    const lease = this.c.ownership.leaseFor(name, probe);
    return lease && this.c.ownership.holds(lease) ? lease : undefined;
  }

  holds(at: HeldAt): boolean {
    return this.c.ownership.holds(at);
  }

  /** Runs `decide` now, or after the shard's states are loaded (decisions keep their order). */
  whenLoaded(at: HeldAt, decide: () => void): void {
    const waiting = this.loading.get(at.fence.key);
    if (waiting) waiting.push(decide);
    else decide();
  }

  private dropUnheld(): void {
    for (const name of this.states.keys()) {
      const m = this.c.monitor(name);
      if (!m || !this.c.ownership.leaseFor(name, m.probe)) this.states.delete(name);
    }
  }

  private async load(won: readonly LeaseKey[]): Promise<void> {
    const keys = new Set(won.map((w) => shardFenceKey(w.group, w.shard)));
    for (const k of keys) this.loading.set(k, []);
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.stamp(won);
          const names = won.flatMap((w) => this.c.namesIn(w.group, w.shard));
          const values = await this.store.bucket(this.bucket).getMany<AlertState>(names);
          const acks = await this.store.bucket(ACK_BUCKET).getMany<AckRecord>(names);
          names.forEach((n, i) => {
            const v = applyAckRecord(values[i], acks[i]);
            if (v) this.states.set(n, v);
            else this.states.delete(n);
          });
          return;
        } catch (err) {
          if (attempt >= LOAD_RETRIES) {
            this.log.error({ err, shards: keys.size }, 'alerting: reading the alert state of won shards failed');
            return;
          }
          await new Promise((r) => setTimeout(r, 200 * attempt));
        }
      }
    } finally {
      for (const k of keys) {
        const waiting = this.loading.get(k) ?? [];
        this.loading.delete(k);
        for (const decide of waiting) decide();
      }
    }
  }

  /** Stamps the won epochs; a shard already stamped newer (lost meanwhile) is skipped. */
  private async stamp(won: readonly LeaseKey[]): Promise<void> {
    const fences = won.map((w) => ({ key: shardFenceKey(w.group, w.shard), epoch: w.epoch }));
    try {
      await this.store.batch([], { fences });
    } catch (err) {
      if (!isStaleFence(err)) throw err;
      for (const f of fences)
        await this.store.batch([], { fences: [f] }).catch((e: unknown) => {
          if (!isStaleFence(e)) throw e;
        });
    }
  }

  /**
   * An acknowledgement record changed (`names` is every held monitor when the change feed named the whole bucket):
   * a held monitor whose open problem it names takes its `ack` (nothing else) and the state is written with it.
   */
  private async followAcks(names: string[]): Promise<void> {
    const held = names.filter((n) => this.states.has(n));
    if (held.length === 0) return;
    const records = await this.store.bucket(ACK_BUCKET).getMany<AckRecord>(held);
    held.forEach((name, i) => {
      const mine = this.states.get(name);
      const next = applyAckRecord(mine, records[i]);
      const m = this.c.monitor(name);
      const at = m && this.heldAt(name, m.probe);
      if (!next || next === mine || !at) return;
      this.states.set(name, next);
      this.persist(name, next, at);
    });
  }
}
