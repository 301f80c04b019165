/**
 * The rows of one in-memory monitor-hour (the open hour of every series), encoded in one growing buffer instead of
 * one object per row plus one per row's metrics: at 50,000 monitors every minute an hour is 3 million rows, which as
 * objects cost ~9 KB of heap per monitor and a long mark for every major GC; encoded a url row is ~22 B and the GC
 * sees one buffer per monitor. Decoded on demand (reads, compaction).
 *
 * Row: varint (ts − hour) | u8 flags (bits 0-2 code, bit 3 extra, bits 4-7 origin slot: 0 unknown, 1-14 the buffer's
 * origin list entry slot − 1, 15 a varint entry index follows) | f32 resp | u8 metricCount | metricCount × metric
 * Metric: u8 head = min(nameIndex, 63) << 2 | tag, then u8 nameIndex when it is ≥ 63, then the value by tag:
 *   0 SAME: none (the value this metric had in the previous appended row that had it),
 *   1 VARINT: a non-negative integer, 2 MILLI: varint of v × 1000 (a non-negative number with at most 3 decimals, as
 *   the probes' µs-rounded timings are), 3 F64.
 * Metric names are interned per buffer (at most 255 distinct; further names are dropped, as in a stored chunk).
 */
import { ByteReader, type RawRow } from './result-codec.js';
import { HOUR_MS } from '../../core/time.js';

const FLAG_EXTRA = 8;
const ORIGIN_SHIFT = 4;
const ORIGIN_ESCAPE = 15;
const TAG_SAME = 0;
const TAG_VARINT = 1;
const TAG_MILLI = 2;
const TAG_F64 = 3;
const INLINE_INDEX_MAX = 63;
/** The most a growth projection allocates at once (a series reporting every second: ~85 KB an hour). */
const MAX_PROJECTED_BYTES = 256 * 1024;

export class RowBuffer {
  private buf: Buffer | null = null;
  private len = 0;
  private names: string[] | null = null;
  /** The origin ids of the rows (result-codec.ts RawRow.origin), interned per buffer. */
  private origins: number[] | null = null;
  /** Each metric's value in the last appended row that had it (for TAG_SAME). */
  private prev: number[] | null = null;
  private inOrder = true;
  /** Two rows may share a ts (rows() keeps the later one). */
  private mayDup = false;
  /** Rows appended (rows() may return fewer: one per ts). */
  count = 0;
  /** The greatest ts held (-Infinity when empty). */
  lastTs = -Infinity;
  /** The first row's ts (for the growth projection). */
  private firstTs = NaN;

  /**
   * @param capacityHint bytes to allocate at the first row (the series' previous hour's size: a steady monitor's
   * hour then fits in one allocation with no growth slack); 0 = start small and grow by a quarter.
   */
  constructor(
    readonly hour: number,
    private readonly capacityHint = 0,
  ) {}

  /** Bytes of encoded rows (not the capacity). */
  get usedBytes(): number {
    return this.len;
  }

  static of(hour: number, rows: readonly RawRow[]): RowBuffer {
    const b = new RowBuffer(hour);
    for (const r of rows) b.append(r);
    return b;
  }

  append(row: RawRow): void {
    this.ensure(16);
    if (this.count === 0) this.firstTs = row.ts;
    if (row.ts < this.lastTs) {
      this.inOrder = false;
      this.mayDup = true;
    } else {
      if (row.ts === this.lastTs) this.mayDup = true;
      this.lastTs = row.ts;
    }
    this.varint(row.ts - this.hour);
    const b = this.buf!;
    const at = row.origin ? this.originIndex(row.origin) : -1;
    const slot = Math.min(at + 1, ORIGIN_ESCAPE);
    b[this.len++] = (row.code & 7) | (row.extra ? FLAG_EXTRA : 0) | (slot << ORIGIN_SHIFT);
    if (slot === ORIGIN_ESCAPE) this.varint(at);
    b.writeFloatLE(row.resp, this.len);
    this.len += 4;
    const countAt = this.len++;
    let n = 0;
    if (row.metrics) {
      for (const k in row.metrics) {
        const idx = this.nameIndex(k);
        if (idx < 0) continue;
        this.ensure(12);
        this.metric(idx, row.metrics[k]!);
        n++;
      }
    }
    this.buf![countAt] = n;
    this.count++;
  }

  /** The rows in ts order (rows appended out of order are sorted); of rows with the same ts the last appended wins. */
  rows(): RawRow[] {
    const out = new Array<RawRow>(this.count);
    if (this.count === 0) return out;
    const r = new ByteReader(this.buf!.subarray(0, this.len));
    const names = this.names ?? [];
    const origins = this.origins ?? [];
    const prev: number[] = [];
    for (let i = 0; i < this.count; i++) {
      const ts = this.hour + r.varint();
      const flags = r.u8();
      const slot = flags >> ORIGIN_SHIFT;
      const origin = slot === 0 ? 0 : origins[slot === ORIGIN_ESCAPE ? r.varint() : slot - 1]!;
      const row: RawRow = { ts, code: flags & 7, resp: r.f32(), extra: (flags & FLAG_EXTRA) !== 0 };
      if (origin !== 0) row.origin = origin;
      const n = r.u8();
      if (n > 0) {
        const metrics: Record<string, number> = {};
        for (let j = 0; j < n; j++) {
          const head = r.u8();
          const idx = head >> 2 === INLINE_INDEX_MAX ? r.u8() : head >> 2;
          const tag = head & 3;
          const v =
            tag === TAG_SAME
              ? prev[idx]!
              : tag === TAG_VARINT
                ? r.varint()
                : tag === TAG_MILLI
                  ? r.varint() / 1000
                  : r.f64();
          prev[idx] = v;
          metrics[names[idx]!] = v;
        }
        row.metrics = metrics;
      }
      out[i] = row;
    }
    if (!this.inOrder) out.sort((a, b) => a.ts - b.ts);
    return this.mayDup ? out.filter((row, i) => i === out.length - 1 || out[i + 1]!.ts !== row.ts) : out;
  }

  /** Bytes held (capacity), for memory accounting. */
  get capacityBytes(): number {
    return this.buf?.length ?? 0;
  }

  // The interned lists grow by one exact-sized copy per new entry (a handful per hour), not by push: a pushed array
  // reserves 17 slots, and with three lists per series that was ~450 B of heap per series (decision 171).
  private originIndex(id: number): number {
    const origins = this.origins;
    const i = origins ? origins.indexOf(id) : -1;
    if (i >= 0) return i;
    this.origins = origins ? origins.concat(id) : [id];
    return this.origins.length - 1;
  }

  private nameIndex(name: string): number {
    const names = this.names;
    const i = names ? names.indexOf(name) : -1;
    if (i >= 0) return i;
    if (names && names.length >= 255) return -1;
    this.names = names ? names.concat(name) : [name];
    // A new name's previous value is none (NaN equals no value: its first value is never written as SAME).
    this.prev = this.prev ? this.prev.concat(NaN) : [NaN];
    return this.names.length - 1;
  }

  private metric(idx: number, v: number): void {
    const b = this.buf!;
    const prev = this.prev!;
    const same = prev[idx] === v;
    prev[idx] = v;
    const milli = Math.round(v * 1000);
    let tag: number;
    if (same) tag = TAG_SAME;
    else if (Number.isInteger(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER) tag = TAG_VARINT;
    else if (v > 0 && milli <= Number.MAX_SAFE_INTEGER && milli / 1000 === v) tag = TAG_MILLI;
    else tag = TAG_F64;
    b[this.len++] = (Math.min(idx, INLINE_INDEX_MAX) << 2) | tag;
    if (idx >= INLINE_INDEX_MAX) b[this.len++] = idx;
    if (tag === TAG_VARINT) this.varint(v);
    else if (tag === TAG_MILLI) this.varint(milli);
    else if (tag === TAG_F64) {
      b.writeDoubleLE(v, this.len);
      this.len += 8;
    }
  }

  private varint(v: number): void {
    const b = this.buf!;
    let n = v;
    while (n >= 0x80) {
      b[this.len++] = n % 0x80 | 0x80;
      n = Math.floor(n / 0x80);
    }
    b[this.len++] = n;
  }

  private ensure(n: number): void {
    const cur = this.buf;
    if (cur && this.len + n <= cur.length) return;
    const first = cur === null && this.capacityHint >= this.len + n ? this.capacityHint : 0;
    // Own allocation (not a slice of the shared pool, which one small buffer would keep alive).
    const next = Buffer.allocUnsafeSlow(first || this.grownSize(n));
    if (cur) cur.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /**
   * The next capacity: a quarter more, or — once two rows give the series' pace — what the rest of the hour will take
   * at that pace (+5 %), so a steady series grows once to its hour's size instead of by steps with slack.
   */
  private grownSize(n: number): number {
    const step = Math.max(128, Math.ceil((this.len + n) * 1.25));
    if (this.count < 2 || !(this.lastTs > this.firstTs)) return step;
    const intervalMs = (this.lastTs - this.firstTs) / (this.count - 1);
    const rowsLeft = Math.ceil((this.hour + HOUR_MS - this.lastTs) / intervalMs);
    const projected = Math.ceil((this.len + rowsLeft * (this.len / this.count)) * 1.05) + n;
    return Math.max(this.len + n + 16, Math.min(projected, MAX_PROJECTED_BYTES));
  }
}
