/**
 * Fenced history writes in a cluster (docs/cluster.md "History", "Fencing"). A result is appended under the fence
 * `{ key: shard:<group>:<shard>, epoch }` of the shard lease it was recorded under; a series' unwritten appended
 * writes (rows, extras, transitions, latest status) carry one fence (`SeriesState.fence`), and a flush's batch carries
 * the fences of every series it includes (plus the lease held now, for the compaction of a held series). PostgreSQL
 * refuses the batch when a newer holder stamped a higher epoch; the flush then DROPS the stale shards' pending writes
 * (never retries them) and writes the others. Rows recorded under an epoch older than another one of the same shard
 * (this member lost the lease and won it again) are dropped before the batch is built: one batch never carries two
 * epochs of a shard. With one process (LMDB) no fence is given and nothing here runs.
 *
 * A row appended without a fence (run now while the lease is held nowhere or by an unreachable member) is written
 * unfenced, unless the series has appended writes under a fence waiting: it joins them (and is dropped with them).
 */
import type { Fence } from '../../core/storage/claims.js';
import type { RawRow } from './result-codec.js';
import { RowBuffer } from './row-buffer.js';
import { type MemChunk, type SeriesState, UNKNOWN_KEY, dropChunks, setLatest } from './series-state.js';

/**
 * Before a row under `fence` is applied: `pending` tells whether the series has appended writes not yet written.
 * Returns the rows dropped (pending writes of an older epoch of the same shard: a lease this member lost).
 */
export function fenceAppend(s: SeriesState, fence: Fence | undefined, pending: boolean): number {
  if (!pending) {
    s.fence = fence;
    return 0;
  }
  if (!fence) return 0;
  const old = s.fence;
  let dropped = 0;
  if (old && old.key === fence.key && old.epoch < fence.epoch) dropped = discardPending(s);
  if (!old || old.key !== fence.key || old.epoch < fence.epoch) s.fence = fence;
  return dropped;
}

/**
 * Removes every appended write of `s` not yet written (the rows from memory too, so no read shows them and no later
 * compaction stores them); the latest status falls back to the newest row left. Returns the rows dropped.
 */
export function discardPending(s: SeriesState): number {
  let dropped = 0;
  let latestGone = false;
  const emptied: MemChunk[] = [];
  for (const c of s.chunks) {
    if (c.fresh.length === 0 && c.pendingExtras.length === 0) continue;
    const gone = new Set(c.fresh.map((r) => r.ts));
    if (s.latest && gone.has(s.latest.ts)) latestGone = true;
    if (gone.size > 0)
      c.buf = RowBuffer.of(
        c.hour,
        c.buf.rows().filter((r) => !gone.has(r.ts)),
      );
    dropped += c.fresh.length;
    c.fresh = [];
    c.pendingExtras = [];
    c.lastKey = UNKNOWN_KEY;
    c.dirty = false;
    if (c.buf.count === 0 && !c.inWal) emptied.push(c);
  }
  if (emptied.length > 0) dropChunks(s, (c) => emptied.includes(c));
  s.pendingTrans = [];
  s.latestDirty = false;
  s.fence = undefined;
  if (latestGone) resetLatest(s);
  return dropped;
}

function resetLatest(s: SeriesState): void {
  let best: RawRow | undefined;
  for (const c of s.chunks) {
    if (c.buf.count === 0 || (best && c.buf.lastTs <= best.ts)) continue;
    const rows = c.buf.rows();
    best = rows[rows.length - 1];
  }
  if (!best) {
    s.latest = undefined;
    s.lastCode = undefined;
    s.lastTs = -Infinity;
    return;
  }
  setLatest(s, best, undefined);
}

/** A flush's fencing: the fences of its series, and what to drop when the store refuses some. */
export class FlushFences {
  private readonly newest = new Map<string, number>();

  /** `held(s)`: the lease fence this member holds for `s` now (its compaction is written under it), if any. */
  constructor(
    private readonly held: (s: SeriesState) => Fence | undefined,
    private readonly onDrop: (s: SeriesState, rows: number) => void,
  ) {}

  /** Drops the pending writes of series recorded under an older epoch of a shard than another in `list`. */
  prepare(list: SeriesState[]): SeriesState[] {
    for (const s of list) for (const f of this.fencesOf(s)) this.note(f);
    for (const s of list) {
      if (s.fence && this.newest.get(s.fence.key)! > s.fence.epoch) this.onDrop(s, discardPending(s));
    }
    return list;
  }

  /** The batch's fences for `list` (one epoch per key: the newest). */
  fences(list: SeriesState[]): Fence[] {
    const keys = new Set<string>();
    for (const s of list) for (const f of this.fencesOf(s)) keys.add(f.key);
    return [...keys].map((key) => ({ key, epoch: this.newest.get(key)! }));
  }

  /** The store refused `stale` keys: their series' pending writes are dropped; returns the series still to write. */
  refuse(list: SeriesState[], stale: readonly string[]): SeriesState[] {
    const keys = new Set(stale);
    return list.filter((s) => {
      if (!this.fencesOf(s).some((f) => keys.has(f.key))) return true;
      this.onDrop(s, discardPending(s));
      return false;
    });
  }

  /** The lease fence of each series, asked once per flush. */
  private readonly leases = new Map<SeriesState, Fence | undefined>();

  private fencesOf(s: SeriesState): Fence[] {
    let lease = this.leases.get(s);
    if (lease === undefined && !this.leases.has(s)) this.leases.set(s, (lease = this.held(s)));
    if (!s.fence) return lease ? [lease] : [];
    return lease && (lease.key !== s.fence.key || lease.epoch !== s.fence.epoch) ? [s.fence, lease] : [s.fence];
  }

  private note(f: Fence): void {
    if ((this.newest.get(f.key) ?? -Infinity) < f.epoch) this.newest.set(f.key, f.epoch);
  }
}
