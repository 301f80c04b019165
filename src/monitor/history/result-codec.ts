/**
 * Compact binary encoding of one monitor-hour of raw results (a "chunk"), stored as one value under
 * [dbname, name, hourStartMs].
 *
 * Layout (version 2):
 *   u8 version | varint rowCount | u8 metricCount | metricCount × (u8 nameLength, UTF-8 name)
 *   varint originCount | originCount × varint originId   the chunk's origin table (origins.ts: an id of the
 *                      `origins` dictionary, 0 = unknown), in first-seen order; 0 entries when no row's origin is known
 *   rowCount × row:
 *     varint tsDelta   ms since the previous row (the first row: since hourStartMs); rows are sorted by ts
 *     u8 flags         bits 0-2 status code (index into STATUSES), bit 3 hasExtra (message/details stored in the
 *                      extras bucket under [dbname, name, ts]), bit 4 hasMetrics, bits 5-7 the row's index in the
 *                      origin table (7 = escape: a varint index follows the flags byte; an empty table: unknown)
 *     float32 responseTimeMs
 *     hasMetrics: metricCount × float64 (NaN = absent in this row)
 * A one-minute row without metrics is 8 bytes (3 + 1 + 4); the origin costs 1 + 2 bytes per chunk (one origin, an
 * id < 16,384) and nothing per row while a monitor-hour has at most 7 origins.
 * Version 1 (still read: old chunks and WAL records): no origin table, bits 5-7 zero; its rows' origin is unknown.
 */

export interface RawRow {
  ts: number;
  /** Status code: index into STATUSES. */
  code: number;
  /** Response time, ms (stored as float32). */
  resp: number;
  /** True when message/details for this row are stored in the extras bucket. */
  extra: boolean;
  metrics?: Record<string, number>;
  /** The id of the process that produced the row in the `origins` dictionary (origins.ts); absent = unknown. */
  origin?: number;
}

const VERSION = 2;
const FLAG_EXTRA = 8;
const FLAG_METRICS = 16;
const ORIGIN_SHIFT = 5;
/** Origin index bits value meaning "a varint index follows". */
const ORIGIN_ESCAPE = 7;

export class ByteWriter {
  buf: Buffer;
  pos = 0;
  constructor(size = 256) {
    this.buf = Buffer.allocUnsafe(size);
  }
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  varint(v: number): void {
    // Non-negative integers up to 2^53.
    this.ensure(8);
    let n = Math.max(0, Math.round(v));
    while (n >= 0x80) {
      this.buf[this.pos++] = n % 0x80 | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.pos++] = n;
  }
  f32(v: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(v, this.pos);
    this.pos += 4;
  }
  f64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8').subarray(0, 255);
    this.u8(b.length);
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** A copy of the written bytes (safe to store). */
  bytes(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}

export class ByteReader {
  pos = 0;
  private readonly view: DataView;
  /** The same bytes as a Buffer, for decoding strings in place (no copy, no Buffer object per string). */
  private readonly b: Buffer;
  constructor(readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  u8(): number {
    return this.buf[this.pos++]!;
  }
  varint(): number {
    let n = 0;
    let mul = 1;
    for (;;) {
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n;
      mul *= 0x80;
    }
  }
  f32(): number {
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }
  f64(): number {
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  str(): string {
    return this.utf8(this.u8());
  }
  /** The next n bytes as UTF-8. */
  utf8(n: number): string {
    if (this.pos + n > this.buf.length) throw new RangeError('string past the end of the data');
    const s = this.b.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }
  /** Whether the n bytes at `a` equal the n bytes at `b` (no copy, no view). */
  sameBytes(a: number, b: number, n: number): boolean {
    if (a + n > this.buf.length || b + n > this.buf.length) return false;
    return this.b.compare(this.b, a, a + n, b, b + n) === 0;
  }
  /** A view of the next n bytes. */
  raw(n: number): Uint8Array {
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
}

/** Metric names used by any row of the chunk, in first-seen order (at most 255). */
function metricNames(rows: readonly RawRow[]): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    if (!r.metrics) continue;
    for (const k of Object.keys(r.metrics)) {
      if (!seen.has(k) && names.length < 255) {
        seen.add(k);
        names.push(k);
      }
    }
  }
  return names;
}

/** The origin table of a chunk (first-seen order) and each row's index in it; empty when no origin is known. */
function originTable(rows: readonly RawRow[]): { ids: number[]; index: Map<number, number> } {
  const ids: number[] = [];
  const index = new Map<number, number>();
  let known = false;
  for (const r of rows) {
    const id = r.origin ?? 0;
    if (id !== 0) known = true;
    if (!index.has(id)) {
      index.set(id, ids.length);
      ids.push(id);
    }
  }
  return known ? { ids, index } : { ids: [], index: new Map() };
}

/** Encodes rows (sorted by ts, all inside [hourStartMs, hourStartMs + 1 h)). */
export function encodeChunk(hourStartMs: number, rows: readonly RawRow[]): Buffer {
  const names = metricNames(rows);
  const origins = originTable(rows);
  const w = new ByteWriter(16 + origins.ids.length * 3 + rows.length * (8 + names.length * 8));
  w.u8(VERSION);
  w.varint(rows.length);
  w.u8(names.length);
  for (const n of names) w.str(n);
  w.varint(origins.ids.length);
  for (const id of origins.ids) w.varint(id);
  let prev = hourStartMs;
  for (const r of rows) {
    w.varint(r.ts - prev);
    prev = r.ts;
    const hasMetrics = names.length > 0 && r.metrics !== undefined;
    const at = origins.index.get(r.origin ?? 0) ?? 0;
    const slot = Math.min(at, ORIGIN_ESCAPE);
    w.u8((r.code & 7) | (r.extra ? FLAG_EXTRA : 0) | (hasMetrics ? FLAG_METRICS : 0) | (slot << ORIGIN_SHIFT));
    if (slot === ORIGIN_ESCAPE) w.varint(at);
    w.f32(r.resp);
    if (hasMetrics) for (const n of names) w.f64(r.metrics![n] ?? NaN);
  }
  return w.bytes();
}

export function decodeChunk(hourStartMs: number, bytes: Uint8Array): RawRow[] {
  return decodeChunkAt(new ByteReader(bytes), hourStartMs);
}

/**
 * The metric names of the chunks decoded last from one reader (a WAL record holds one single-row chunk per result,
 * and a record's rows mostly share their names): a chunk whose names section has the same bytes reuses the array
 * instead of decoding a string per name per row (decision 170).
 */
export interface NameCache {
  start: number;
  end: number;
  names: string[];
}

/** Decodes the chunk at the reader's position (it ends at the chunk's end); `cache`: see NameCache. */
export function decodeChunkAt(r: ByteReader, hourStartMs: number, cache?: NameCache): RawRow[] {
  const version = r.u8();
  if (version !== VERSION && version !== 1) throw new Error(`unknown chunk version ${version}`);
  const count = r.varint();
  const names = readNames(r, cache);
  let origins: number[] | undefined;
  if (version >= 2) for (let i = r.varint(); i > 0; i--) (origins ??= []).push(r.varint());
  const rows = new Array<RawRow>(count);
  let ts = hourStartMs;
  for (let i = 0; i < count; i++) {
    ts += r.varint();
    const flags = r.u8();
    const slot = flags >> ORIGIN_SHIFT;
    const origin = origins === undefined ? 0 : (origins[slot === ORIGIN_ESCAPE ? r.varint() : slot] ?? 0);
    const row: RawRow = { ts, code: flags & 7, resp: r.f32(), extra: (flags & FLAG_EXTRA) !== 0 };
    if (origin !== 0) row.origin = origin;
    if (flags & FLAG_METRICS) {
      const metrics: Record<string, number> = {};
      for (const n of names) {
        const v = r.f64();
        if (!Number.isNaN(v)) metrics[n] = v;
      }
      row.metrics = metrics;
    }
    rows[i] = row;
  }
  return rows;
}

const NO_NAMES: string[] = [];

/** The names section: `cache.names` when its bytes equal the cached section's, else decoded (and cached). */
function readNames(r: ByteReader, cache: NameCache | undefined): string[] {
  const start = r.pos;
  const n = r.u8();
  if (n === 0) return NO_NAMES;
  if (cache) {
    let end = start + 1;
    for (let i = 0; i < n; i++) end += 1 + r.buf[end]!;
    if (cache.end - cache.start === end - start && r.sameBytes(cache.start, start, end - start)) {
      r.pos = end;
      return cache.names;
    }
  }
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push(r.str());
  if (cache) {
    cache.start = start;
    cache.end = r.pos;
    cache.names = names;
  }
  return names;
}
