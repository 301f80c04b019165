/**
 * Key and bucket-name rules shared by every KvStore driver, and the byte encoding of keys.
 *
 * Keys are encoded with `ordered-binary` (the encoding LMDB's `keyEncoding: 'ordered-binary'` uses), so comparing the
 * encoded bytes with memcmp (LMDB's comparator, PostgreSQL's bytea ordering) gives the documented key order:
 * numbers before strings, numbers numerically, strings by UTF-8 bytes, arrays element by element.
 *
 * Rules enforced identically by all drivers (violations throw AppError VALIDATION):
 * - a key is a string, a finite-or-infinite number (not NaN), or a non-empty flat array of those;
 * - the encoded key is at most MAX_KEY_BYTES (LMDB's limit) long;
 * - `-0` is stored as `0`; a one-element array key reads back as its single element (ordered-binary encodes
 *   `['a']` and `'a'` to the same bytes).
 */
import { fromBufferKey, toBufferKey } from 'ordered-binary';
import { AppError } from '../errors.js';
import { BUCKET_NAME_RE, type KvKey, type KvKeyPart } from './kv-store.js';

/** The largest encoded key LMDB accepts (lmdb-js is built with this limit); other drivers enforce the same. */
export const MAX_KEY_BYTES = 1978;

export function assertBucketName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !BUCKET_NAME_RE.test(name)) {
    throw AppError.badRequest(`invalid bucket name: must match ${BUCKET_NAME_RE.source}`, 'bucket');
  }
}

function normalizePart(part: unknown): KvKeyPart {
  if (typeof part === 'string') return part;
  if (typeof part === 'number') {
    if (Number.isNaN(part)) throw AppError.badRequest('invalid key: NaN is not a key', 'key');
    return Object.is(part, -0) ? 0 : part;
  }
  throw AppError.badRequest('invalid key: parts must be strings or numbers', 'key');
}

/** Validates a key and returns it normalized (-0 → 0). Throws AppError VALIDATION on an invalid key. */
export function normalizeKey(key: unknown): KvKey {
  if (typeof key === 'string') return key;
  if (Array.isArray(key)) {
    if (key.length === 0) throw AppError.badRequest('invalid key: empty array', 'key');
    // hot path: no allocation unless a part needs normalizing (-0) or is invalid
    for (const part of key) {
      if (typeof part !== 'string' && (typeof part !== 'number' || part === 0 || Number.isNaN(part))) {
        return key.map(normalizePart);
      }
    }
    return key as KvKeyPart[];
  }
  return normalizePart(key);
}

/** Encodes a key to a fresh Buffer (ordered-binary bytes). Validates type and size. */
export function encodeKey(key: unknown): Buffer {
  const normalized = normalizeKey(key);
  // toBufferKey returns a view into a shared scratch buffer: copy it before the next call reuses the memory.
  const bytes = Buffer.from(toBufferKey(normalized));
  if (bytes.length > MAX_KEY_BYTES) {
    throw AppError.badRequest(`invalid key: encoded key longer than ${MAX_KEY_BYTES} bytes`, 'key');
  }
  return bytes;
}

export function decodeKey(bytes: Uint8Array): KvKey {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return fromBufferKey(buf) as KvKey;
}

/** Values may be anything msgpack carries except `undefined` (a stored undefined could not be told from a miss). */
export function assertValue(value: unknown): void {
  if (value === undefined) throw AppError.badRequest('value must not be undefined', 'value');
}

export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
    throw AppError.badRequest('limit must be a non-negative integer', 'limit');
  }
}
