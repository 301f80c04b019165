/**
 * Bounds what one run stores and shows (docs/security.md §9): a result's `message` and `details` together serialise to
 * at most MAX_RESULT_BYTES. A larger one is cut, largest parts first — arrays keep their head, strings their start —
 * and says so in `details.truncated` (`{ originalBytes, keys }`); as a last resort `details` is replaced by that
 * marker alone. A check's normal result (a few hundred bytes) is returned untouched after an allocation-free upper
 * bound of its size (jsonBytesAtMost); only what might be large is measured exactly.
 */

export const MAX_RESULT_BYTES = 64 * 1024;
/** A message longer than this is cut (it is also part of the bound). */
export const MAX_MESSAGE_CHARS = 4096;

type Details = Record<string, unknown>;

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '');

/**
 * An upper bound of `size(v)` that allocates nothing, or Infinity once it passes `budget` (or for what it cannot
 * bound: deep nesting, toJSON). A UTF-16 unit is at most 6 JSON bytes (`\u001f`), a number at most 24
 * (`-1.7976931348623157e+308`). A check's usual details (a few hundred bytes) are bounded here far below the room,
 * so the exact JSON size — a string per result, the larger part of this module's cost in bench:scheduler — is
 * computed only for what might be large.
 */
export function jsonBytesAtMost(v: unknown, budget: number, depth = 0): number {
  switch (typeof v) {
    case 'string':
      return v.length * 6 + 2;
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      return 4; // "null" inside an array; omitted in an object (its key is counted anyway)
    case 'bigint':
      return Infinity; // JSON.stringify throws: leave it to the exact path
  }
  if (v === null) return 4;
  if (depth > 32 || typeof (v as { toJSON?: unknown }).toJSON === 'function') return Infinity;
  let n = 2;
  if (Array.isArray(v)) {
    for (const x of v) {
      n += 1 + jsonBytesAtMost(x, budget - n, depth + 1);
      if (n > budget) return Infinity;
    }
    return n;
  }
  for (const k in v as Record<string, unknown>) {
    if (!Object.hasOwn(v as object, k)) continue;
    n += k.length * 6 + 4 + jsonBytesAtMost((v as Record<string, unknown>)[k], budget - n, depth + 1);
    if (n > budget) return Infinity;
  }
  return n;
}

/** Cuts the largest value of `d` by half (arrays: keep the head; strings: keep the start; objects: recurse). */
function shrinkLargest(d: Details, cut: Set<string>, path: string): boolean {
  let bestKey: string | undefined;
  let bestSize = 0;
  for (const [k, v] of Object.entries(d)) {
    const n = size(v);
    if (n > bestSize && (Array.isArray(v) || typeof v === 'string' || (v !== null && typeof v === 'object'))) {
      bestKey = k;
      bestSize = n;
    }
  }
  if (bestKey === undefined || bestSize < 64) return false;
  const v = d[bestKey];
  const where = path ? `${path}.${bestKey}` : bestKey;
  if (Array.isArray(v)) {
    if (v.length <= 1) {
      if (v.length === 1 && v[0] !== null && typeof v[0] === 'object' && !Array.isArray(v[0]))
        return shrinkLargest(v[0] as Details, cut, `${where}[0]`);
      d[bestKey] = [];
    } else d[bestKey] = v.slice(0, Math.floor(v.length / 2));
  } else if (typeof v === 'string') d[bestKey] = `${v.slice(0, Math.floor(v.length / 2))}…`;
  else if (!shrinkLargest(v as Details, cut, where)) d[bestKey] = null;
  cut.add(where);
  return true;
}

/** Returns `message` and `details` within MAX_RESULT_BYTES (copies only what it cuts). */
export function boundResult(
  message: string | undefined,
  details: Details | undefined,
  maxBytes = MAX_RESULT_BYTES,
): { message: string | undefined; details: Details | undefined } {
  const msg =
    message !== undefined && message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
  if (details === undefined) return { message: msg, details };
  const room = maxBytes - Buffer.byteLength(msg ?? '') - 256; // 256: the marker itself
  if (jsonBytesAtMost(details, room) <= room) return { message: msg, details };
  const originalBytes = size(details);
  if (originalBytes <= room) return { message: msg, details };
  const copy = structuredClone(details);
  const cut = new Set<string>();
  let guard = 0;
  while (size(copy) > room && guard++ < 200 && shrinkLargest(copy, cut, '')) {
    /* halve the largest part again */
  }
  const keys = [...cut].slice(0, 10);
  if (size(copy) > room) return { message: msg, details: { truncated: { originalBytes, keys: ['*'] } } };
  return { message: msg, details: { ...copy, truncated: { originalBytes, keys } } };
}
