/**
 * Token kinds and their lifetimes. A kind lasts a fixed number of milliseconds (`lifetimeMs`) or of calendar years
 * (`lifetimeYears`: the same date and time N years later, Feb 29 → Feb 28 — a "15 years" token is not 15 × 365 days).
 * A refresh never extends a token past its session cap: `maxSessionMs` after the original authentication (`authMs`),
 * by default the kind's own lifetime, so only kinds that set a longer cap gain anything but rotation from a refresh.
 */
import { DAY_MS, HOUR_MS } from '../time.js';

export interface TokenKindSpec {
  lifetimeMs?: number;
  lifetimeYears?: number;
  /** Longest time from the original login that refreshes may reach (default: one lifetime). */
  maxSessionMs?: number;
  /** Recorded in the tokens bucket, listable and revocable. */
  tracked: boolean;
  /** Only admins may obtain (and refresh) it. */
  adminOnly: boolean;
}

/** The same UTC date and time `years` later; a Feb 29 that does not exist then becomes Feb 28. */
export function addYearsMs(fromMs: number, years: number): number {
  const d = new Date(fromMs);
  const month = d.getUTCMonth();
  d.setUTCFullYear(d.getUTCFullYear() + years);
  if (d.getUTCMonth() !== month) d.setUTCDate(0);
  return d.getTime();
}

/** When a token of this kind issued at `fromMs` expires (before any session cap). */
export function lifetimeEndMs(spec: TokenKindSpec, fromMs: number): number {
  if (spec.lifetimeYears !== undefined) return addYearsMs(fromMs, spec.lifetimeYears);
  return fromMs + (spec.lifetimeMs ?? 0);
}

/** The latest expiry any refresh of a session authenticated at `authMs` may have. */
export function sessionCapMs(spec: TokenKindSpec, authMs: number): number {
  return spec.maxSessionMs !== undefined ? authMs + spec.maxSessionMs : lifetimeEndMs(spec, authMs);
}

/** "24 h", "60 days", "15 years": for the OpenAPI descriptions. */
export function lifetimeText(spec: TokenKindSpec): string {
  if (spec.lifetimeYears !== undefined)
    return `${spec.lifetimeYears} calendar year${spec.lifetimeYears > 1 ? 's' : ''}`;
  const ms = spec.lifetimeMs ?? 0;
  if (ms >= 2 * DAY_MS) return `${Math.round(ms / DAY_MS)} days`;
  if (ms >= HOUR_MS) return `${Math.round(ms / HOUR_MS)} h`;
  return `${Math.round(ms / 60_000)} minutes`;
}
