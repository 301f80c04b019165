/**
 * Bounds what one run stores and shows (docs/security.md §9): a result's `message` and `details` together serialise to
 * at most MAX_RESULT_BYTES. A larger one is cut, largest parts first — arrays keep their head, strings their start —
 * and says so in `details.truncated` (`{ originalBytes, keys }`); as a last resort `details` is replaced by that
 * marker alone. A check's normal result (a few hundred bytes) is returned untouched after one size measurement.
 */

export const MAX_RESULT_BYTES = 64 * 1024;
/** A message longer than this is cut (it is also part of the bound). */
export const MAX_MESSAGE_CHARS = 4096;

type Details = Record<string, unknown>;

const size = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '');

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
  const originalBytes = size(details);
  const room = maxBytes - Buffer.byteLength(msg ?? '') - 256; // 256: the marker itself
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
