/**
 * Failed-login throttling per user name and per client address: `maxFailures` failures within `windowMs` block the
 * key for `blockMs` (defaults: 10 failures in 5 minutes → 30 s). A blocked login answers 429 with Retry-After,
 * for existing and unknown users alike. A success clears the user's counter.
 */
export interface ThrottleOptions {
  maxFailures?: number;
  windowMs?: number;
  blockMs?: number;
  now?: () => number;
}

interface Entry {
  failures: number[];
  blockedUntilMs: number;
}

export class LoginThrottle {
  private readonly entries = new Map<string, Entry>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly blockMs: number;
  private readonly now: () => number;

  constructor(opts: ThrottleOptions = {}) {
    this.maxFailures = opts.maxFailures ?? 10;
    this.windowMs = opts.windowMs ?? 5 * 60_000;
    this.blockMs = opts.blockMs ?? 30_000;
    this.now = opts.now ?? Date.now;
  }

  /** Seconds until the first blocked key frees, or 0 when none is blocked. */
  blockedForS(keys: string[]): number {
    const now = this.now();
    let ms = 0;
    for (const k of keys) {
      const e = this.entries.get(k);
      if (e && e.blockedUntilMs > now) ms = Math.max(ms, e.blockedUntilMs - now);
    }
    return Math.ceil(ms / 1000);
  }

  fail(keys: string[]): void {
    const now = this.now();
    for (const k of keys) {
      const e = this.entries.get(k) ?? { failures: [], blockedUntilMs: 0 };
      e.failures = e.failures.filter((t) => now - t < this.windowMs);
      e.failures.push(now);
      if (e.failures.length >= this.maxFailures) {
        e.blockedUntilMs = now + this.blockMs;
        e.failures = [];
      }
      this.entries.set(k, e);
    }
    if (this.entries.size > 50_000) this.sweep(now);
  }

  succeed(key: string): void {
    this.entries.delete(key);
  }

  private sweep(now: number): void {
    for (const [k, e] of this.entries) {
      if (e.blockedUntilMs < now && e.failures.every((t) => now - t >= this.windowMs)) this.entries.delete(k);
    }
  }
}
