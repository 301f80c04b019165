/**
 * Claims and fences every process on one store shares (docs/cluster.md "Alerting"). Both are small primitives beside
 * the buckets, like the attempt counters (attempt-counters.ts): the LMDB driver keeps them in memory (one process owns
 * the store), the PostgreSQL driver in tables of its namespace (postgres-claims.ts). Times are the store's clock.
 *
 * - A **claim** on a string key is held by one owner until it expires (`ttlMs` after the last claim) or its owner
 *   releases it. Claiming a key that is free, expired or already the caller's succeeds (and renews it); a key another
 *   owner holds unexpired is refused. So work items keyed this way are taken by one live process at a time, and by
 *   another once the holder died (its claims expire).
 * - A **fence** `{ key, epoch }` guards a batch (`batch(ops, { fences })`): the batch is written only when the stored
 *   epoch of every fence key is at most the fence's epoch, and raises it to that epoch; otherwise nothing is written
 *   and the batch fails with a stale-fence CONFLICT naming every stale key (`staleFenceKeys`). A new lease holder
 *   stamps its epoch first (a batch with no ops), after which a write under an older epoch (a paused or partitioned
 *   former holder) is refused by the store itself.
 */
import { AppError, isAppError } from '../errors.js';

export interface Claims {
  /** Claims (or renews) `keys` for `owner` for `ttlMs`; resolves the keys `owner` holds now (the others are held). */
  claim(keys: string[], owner: string, ttlMs: number): Promise<string[]>;
  /** Releases the keys of `keys` that `owner` holds; other owners' claims are untouched. */
  release(keys: string[], owner: string): Promise<void>;
}

export interface Fence {
  key: string;
  epoch: number;
}

export interface BatchOptions {
  /** Write only if no fence key's stored epoch is greater (then stamp them); see the file comment. */
  fences?: Fence[];
}

const STALE = 'stale fence';

/** A batch refused by its fences: `keys` are every fence key of the batch whose stored epoch is newer. */
export class StaleFenceError extends AppError {
  constructor(readonly keys: readonly string[]) {
    super('CONFLICT', `${STALE}: ${keys.join(', ')} ${keys.length > 1 ? 'are' : 'is'} held under a newer epoch`);
  }
}

export function staleFence(keys: readonly string[]): StaleFenceError {
  return new StaleFenceError(keys);
}

/** Whether a batch was refused because one of its fences is older than the stored epoch. */
export function isStaleFence(err: unknown): boolean {
  return isAppError(err) && err.code === 'CONFLICT' && err.message.startsWith(STALE);
}

/** The stale fence keys a refused batch names (empty for any other error). */
export function staleFenceKeys(err: unknown): readonly string[] {
  return err instanceof StaleFenceError ? err.keys : [];
}

/** The fences deduplicated by key (highest epoch) and sorted by key: two writers lock rows in one order. */
export function normalizeFences(fences: readonly Fence[] | undefined): Fence[] {
  if (!fences?.length) return [];
  const by = new Map<string, number>();
  for (const f of fences) {
    if (typeof f.key !== 'string' || f.key.length === 0 || !Number.isSafeInteger(f.epoch))
      throw AppError.badRequest('invalid fence', 'fences');
    by.set(f.key, Math.max(f.epoch, by.get(f.key) ?? -Infinity));
  }
  return [...by].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, epoch]) => ({ key, epoch }));
}

/** The fences of a store only one process opens. */
export class MemoryFences {
  private readonly epochs = new Map<string, number>();

  /** Throws a stale-fence CONFLICT (changing nothing) unless every fence holds; then stamps them. */
  check(fences: readonly Fence[]): void {
    const stale = fences.filter((f) => (this.epochs.get(f.key) ?? -Infinity) > f.epoch).map((f) => f.key);
    if (stale.length > 0) throw staleFence(stale);
    for (const f of fences) this.epochs.set(f.key, f.epoch);
  }
}

/** The claims of a store only one process opens. */
export class MemoryClaims implements Claims {
  private readonly held = new Map<string, { owner: string; expiresMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async claim(keys: string[], owner: string, ttlMs: number): Promise<string[]> {
    const nowMs = this.now();
    const out: string[] = [];
    for (const k of new Set(keys)) {
      const c = this.held.get(k);
      if (c && c.owner !== owner && c.expiresMs >= nowMs) continue;
      this.held.set(k, { owner, expiresMs: nowMs + ttlMs });
      out.push(k);
    }
    if (this.held.size > 10_000) for (const [k, c] of this.held) if (c.expiresMs < nowMs) this.held.delete(k);
    return out;
  }

  async release(keys: string[], owner: string): Promise<void> {
    for (const k of keys) if (this.held.get(k)?.owner === owner) this.held.delete(k);
  }
}
