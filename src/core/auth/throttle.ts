/**
 * Login limiting (security §14). Every attempt is counted BEFORE its password is checked: `reserve` runs
 * synchronously, refuses when a key is blocked and otherwise records the attempt against every key at once, so
 * concurrent attempts cannot all pass a check-then-act gap (the review got 22–32 password checks through a limit of
 * 10). A key blocks for `blockMs` when it reaches its own maximum within `windowMs`. The keys UserService uses:
 * the (name, client address) pair (10), the client address (30: one address spraying names) and the name across all
 * addresses (100: a distributed guess) — so one address can lock out only itself, never `admin` for everybody else.
 * A success takes its attempt back (and clears the pair). Password checks (argon2, ~19 MiB each) run at most
 * `maxConcurrent` at a time; more than `maxQueued` waiting are refused at once.
 */
import { AppError } from '../errors.js';

export interface LimiterOptions {
  windowMs?: number;
  blockMs?: number;
  maxConcurrent?: number;
  maxQueued?: number;
  now?: () => number;
}

export interface LimitKey {
  key: string;
  maxFailures: number;
}

interface Entry {
  attempts: number[];
  blockedUntilMs: number;
}

export interface Reservation {
  keys: LimitKey[];
  atMs: number;
}

export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();
  private readonly windowMs: number;
  private readonly blockMs: number;
  private readonly maxConcurrent: number;
  private readonly maxQueued: number;
  private readonly now: () => number;
  /** The window and block, for the store's shared counters (UserService.authenticate). */
  readonly timing: { windowMs: number; blockMs: number };
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(opts: LimiterOptions = {}) {
    this.windowMs = opts.windowMs ?? 5 * 60_000;
    this.blockMs = opts.blockMs ?? 30_000;
    this.timing = { windowMs: this.windowMs, blockMs: this.blockMs };
    this.maxConcurrent = opts.maxConcurrent ?? 4;
    this.maxQueued = opts.maxQueued ?? 256;
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

  /** Synchronous: 429 when a key is blocked, else the attempt counts against every key before anything awaits. */
  reserve(keys: LimitKey[]): Reservation {
    const waitS = this.blockedForS(keys.map((k) => k.key));
    if (waitS > 0) {
      throw new AppError('TOO_MANY_REQUESTS', 'too many failed logins; try again later', { retryAfterS: waitS });
    }
    const now = this.now();
    for (const { key, maxFailures } of keys) {
      const e = this.entries.get(key) ?? { attempts: [], blockedUntilMs: 0 };
      e.attempts = e.attempts.filter((t) => now - t < this.windowMs);
      e.attempts.push(now);
      if (e.attempts.length >= maxFailures) {
        e.blockedUntilMs = now + this.blockMs;
        e.attempts = [];
      }
      this.entries.set(key, e);
    }
    if (this.entries.size > 50_000) this.sweep(now);
    return { keys, atMs: now };
  }

  /** The attempt succeeded: it no longer counts, and `clearKey` (the pair) starts from zero. */
  succeed(r: Reservation, clearKey: string): void {
    for (const { key } of r.keys) {
      const e = this.entries.get(key);
      if (!e) continue;
      const i = e.attempts.indexOf(r.atMs);
      if (i >= 0) e.attempts.splice(i, 1);
    }
    this.entries.delete(clearKey);
  }

  /** Runs a password check when one of the `maxConcurrent` slots is free. */
  async withVerifySlot<T>(check: () => Promise<T>): Promise<T> {
    if (this.running >= this.maxConcurrent) {
      if (this.waiting.length >= this.maxQueued) {
        throw new AppError('TOO_MANY_REQUESTS', 'too many logins in progress; try again', { retryAfterS: 1 });
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running++;
    try {
      return await check();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private sweep(now: number): void {
    for (const [k, e] of this.entries) {
      if (e.blockedUntilMs < now && e.attempts.every((t) => now - t >= this.windowMs)) this.entries.delete(k);
    }
  }
}
