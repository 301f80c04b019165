/**
 * How monitors map to shards and shards to members (docs/cluster.md). A monitor belongs to the probe group of its
 * `probe` field ('', '*' and the stored default 'default' mean any member: group '*') and to one of SHARD_COUNT
 * shards by a hash of its name. Each (group, shard) is wanted by the eligible live member with the highest
 * rendezvous score hash(group, shard, member id): spreading evenly, and moving only the shards of a member that
 * leaves (or the ones a joining member wins) when membership changes.
 */

import { hashId } from '../scheduler/schedule.js';

export const SHARD_COUNT = 256;
/** The group of monitors any member may run. */
export const ANY_GROUP = '*';

export function shardOf(monitorName: string): number {
  return hashId(monitorName) % SHARD_COUNT;
}

/** A (group, shard)'s key in this process's maps (the coordinator's leases, the shared thresholds' records). */
export function shardKey(group: string, shard: number): string {
  return `${group}\u0000${shard}`;
}

/** The store fence key of a shard's lease (claims.ts): writes under its epoch are refused once a newer one is stamped. */
export function shardFenceKey(group: string, shard: number): string {
  return `shard:${group}:${shard}`;
}

/** The probe group a monitor's `probe` field puts it in. */
export function groupOf(probe: string | undefined): string {
  const p = (probe ?? '').trim();
  return p === '' || p === ANY_GROUP || p === 'default' ? ANY_GROUP : p;
}

export interface MemberView {
  id: string;
  probe: string;
}

/** Whether a member may hold shards of `group`. */
export function eligible(member: MemberView, group: string): boolean {
  return group === ANY_GROUP || member.probe === group;
}

/** The member that should hold (group, shard): highest rendezvous score among `members` (ties: smaller id). */
export function rendezvousOwner(group: string, shard: number, members: readonly MemberView[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const m of members) {
    if (!eligible(m, group)) continue;
    const score = hashId(`${group}\u0000${shard}\u0000${m.id}`);
    if (score > bestScore || (score === bestScore && best !== undefined && m.id < best)) {
      best = m.id;
      bestScore = score;
    }
  }
  return best;
}
