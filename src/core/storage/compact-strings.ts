/**
 * Strings of a decoded record, made fit to be kept in memory for the life of the process (decision 181).
 *
 * Both drivers decode values with msgpackr, whose native string extraction decodes a record's strings as one string
 * and hands out slices of it. V8 keeps a slice of 13 characters or more as a view on its parent, so one long field
 * kept (a url, a display name) keeps the record's every string alive, once more than the fields themselves: a long-lived
 * cache of decoded records (the monitor definitions, on every instance) pays for each record twice. Shorter strings
 * are copies, one per record: the same "on", "1MIN" or "default" 50,000 times.
 *
 * `compactStrings` walks a decoded plain value (objects and arrays, as a store returns them) and replaces, in place:
 * - a string of 13 characters or more by a copy of its own (no parent);
 * - a shorter one by the pool's copy of the same text, so repeated values share one string.
 * The pool stops taking new strings at `maxSize` (then only lookups): unique short values (names) cannot grow it
 * without bound, and the common ones are met first.
 */

/** V8's SlicedString::kMinLength: a substring shorter than this is a copy, not a view on its parent. */
const MIN_SLICE = 13;

export class StringPool {
  private readonly pool = new Map<string, string>();

  constructor(private readonly maxSize = 4096) {}

  /** The pooled copy of a short string, or a parentless copy of a long one. */
  keep(s: string): string {
    if (s.length >= MIN_SLICE) return detached(s);
    const pooled = this.pool.get(s);
    if (pooled !== undefined) return pooled;
    if (this.pool.size < this.maxSize) this.pool.set(s, s);
    return s;
  }

  get size(): number {
    return this.pool.size;
  }
}

/** A copy of `s` that holds its own characters (a sliced string's parent is not kept by it). */
function detached(s: string): string {
  // JSON.parse builds a new sequential string (`slice`, `concat` or a template would return a view, a rope or s), and
  // the round trip keeps every code unit, lone surrogates included (a UTF-8 round trip would replace them).
  return JSON.parse(JSON.stringify(s)) as string;
}

/** Replaces the strings in a decoded plain value as described above; returns the value (changed in place). */
export function compactStrings<T>(value: T, pool: StringPool): T {
  compactIn(value, pool, 0);
  return value;
}

function compactIn(v: unknown, pool: StringPool, depth: number): void {
  if (depth > 32 || v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'string') v[i] = pool.keep(x);
      else compactIn(x, pool, depth + 1);
    }
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (typeof x === 'string') o[k] = pool.keep(x);
    else compactIn(x, pool, depth + 1);
  }
}
