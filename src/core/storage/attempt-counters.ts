/**
 * Attempt counters shared by every process on one store (login throttling: docs/security.md §14, docs/cluster.md).
 * A counter counts attempts in a fixed window that starts at its first attempt; the attempt that reaches `max` is
 * allowed and blocks the key for `blockMs` (and starts the count again), as the in-process LoginLimiter does. `hit`
 * is atomic across processes: it refuses (counting nothing) when any key is blocked, else counts against every key.
 * `step` is the one rule; the LMDB driver keeps counters in memory (one process owns the store), the PostgreSQL driver
 * in a table under row locks (postgres-counters.ts). Times are the store's clock: PostgreSQL's for PostgreSQL.
 */

export interface AttemptKey {
  key: string;
  max: number;
  windowMs: number;
  blockMs: number;
}

export interface CounterState {
  n: number;
  windowEndMs: number;
  blockedUntilMs: number;
}

export interface AttemptCounters {
  /** Resolves 0 when the attempt was counted against every key, else how long (ms) the first blocked key stays so. */
  hit(keys: AttemptKey[]): Promise<number>;
  /** A successful attempt: it no longer counts against `keys`, and `clearKey` starts from zero. */
  release(keys: string[], clearKey: string): Promise<void>;
}

/** How long `s` is blocked at `nowMs` (0: not blocked). */
export function blockedForMs(s: CounterState | undefined, nowMs: number): number {
  return s && s.blockedUntilMs > nowMs ? s.blockedUntilMs - nowMs : 0;
}

/** One counted attempt (the key is not blocked). */
export function step(s: CounterState | undefined, k: AttemptKey, nowMs: number): CounterState {
  const fresh = !s || s.windowEndMs <= nowMs;
  const n = (fresh ? 0 : s.n) + 1;
  const windowEndMs = fresh ? nowMs + k.windowMs : s.windowEndMs;
  return n >= k.max ? { n: 0, windowEndMs, blockedUntilMs: nowMs + k.blockMs } : { n, windowEndMs, blockedUntilMs: 0 };
}

/** The counters of a store only one process opens. */
export class MemoryAttemptCounters implements AttemptCounters {
  private readonly states = new Map<string, CounterState>();

  constructor(private readonly now: () => number = Date.now) {}

  async hit(keys: AttemptKey[]): Promise<number> {
    const nowMs = this.now();
    const blocked = Math.max(0, ...keys.map((k) => blockedForMs(this.states.get(k.key), nowMs)));
    if (blocked > 0) return blocked;
    for (const k of keys) this.states.set(k.key, step(this.states.get(k.key), k, nowMs));
    if (this.states.size > 50_000) this.sweep(nowMs);
    return 0;
  }

  async release(keys: string[], clearKey: string): Promise<void> {
    for (const key of keys) {
      const s = this.states.get(key);
      if (s && s.n > 0) s.n--;
    }
    this.states.delete(clearKey);
  }

  private sweep(nowMs: number): void {
    for (const [k, s] of this.states) if (s.windowEndMs <= nowMs && s.blockedUntilMs <= nowMs) this.states.delete(k);
  }
}
