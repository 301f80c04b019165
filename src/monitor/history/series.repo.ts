/**
 * Storage layout of the results history (all keys start with [dbname, name], so one monitor's rows are contiguous
 * and every read is an ordered range read on that prefix, never a whole-bucket scan):
 *
 *   hist.raw     [dbname, name, hourStartMs] → Buffer   one monitor-hour of raw results (result-codec.ts)
 *   hist.day     [dbname, name, dayStartMs]  → Buffer   the hourly rollups of that UTC day (a day block, rollup.ts)
 *   hist.extra   [dbname, name, tsMs]        → {m?, d?} message/details of a result, only when the row's
 *                                                        hasExtra flag is set (see history.service.ts)
 *   hist.trans   [dbname, name, tsMs]        → code     a status transition (first result, then every change)
 *   hist.latest  [dbname, name]              → [tsMs, code, responseTimeMs, message?, originId?] (origins.ts;
 *                                                        message null when absent and an origin follows)
 */
import type { BatchOp, KvKey, KvStore } from '../../core/storage/kv-store.js';
import type { Fence } from '../../core/storage/claims.js';
import type { DbName } from './types.js';

export const BUCKET = {
  raw: 'hist.raw',
  day: 'hist.day',
  extra: 'hist.extra',
  trans: 'hist.trans',
  latest: 'hist.latest',
} as const;

export interface Extra {
  m?: string;
  d?: Record<string, unknown>;
}

export type LatestValue = [number, number, number, (string | null)?, number?];

type Timed<V> = Array<{ t: number; v: V }>;

function k(db: string, name: string, t: number): KvKey {
  return [db, name, t];
}

/** One series' chunk hour or day-block day. */
export interface SeriesAt {
  db: DbName;
  name: string;
  t: number;
}

export interface SeriesRepo {
  chunks(db: DbName, name: string, fromHour: number, toHour: number): Promise<Timed<Uint8Array>>;
  /** Up to `limit` chunks with hourStart ≤ atOrBeforeHour, newest first. */
  chunksBackward(db: DbName, name: string, atOrBeforeHour: number, limit: number): Promise<Timed<Uint8Array>>;
  getChunks(db: DbName, name: string, hours: number[]): Promise<Array<Uint8Array | undefined>>;
  /** Day blocks of fromDay ≤ day < to. */
  dayBlocks(db: DbName, name: string, fromDay: number, to: number): Promise<Timed<Uint8Array>>;
  getDayBlocks(db: DbName, name: string, days: number[]): Promise<Array<Uint8Array | undefined>>;
  /** Chunks (`raw`) or day blocks (`day`) of several series in one store read (a flush compacting many series). */
  getMany(bucket: 'raw' | 'day', refs: readonly SeriesAt[]): Promise<Array<Uint8Array | undefined>>;
  extras(db: DbName, name: string, fromTs: number, toTs: number): Promise<Timed<Extra>>;
  transitions(db: DbName, name: string, fromTs: number, toTs: number): Promise<Timed<number>>;
  /** The last transition at or before ts. */
  transitionAtOrBefore(db: DbName, name: string, ts: number): Promise<{ t: number; v: number } | undefined>;
  allLatest(): Promise<Array<{ db: string; name: string; v: LatestValue }>>;
  deleteSeries(db: DbName, name: string): Promise<void>;
  /** Deletes raw chunks/extras before rawBefore, day blocks and transitions before rollupBefore (a day start). */
  purgeSeries(db: DbName, name: string, rawBefore: number, rollupBefore: number): Promise<number>;
  batch(ops: BatchOp[], fences?: Fence[]): Promise<void>;
}

export function putOp(bucket: string, db: string, name: string, t: number, value: unknown): BatchOp {
  return { type: 'put', bucket, key: k(db, name, t), value };
}

export function latestOp(db: string, name: string, value: LatestValue): BatchOp {
  return { type: 'put', bucket: BUCKET.latest, key: [db, name], value };
}

export function createSeriesRepo(store: KvStore): SeriesRepo {
  const b = {
    raw: store.bucket(BUCKET.raw),
    day: store.bucket(BUCKET.day),
    extra: store.bucket(BUCKET.extra),
    trans: store.bucket(BUCKET.trans),
    latest: store.bucket(BUCKET.latest),
  };

  async function collect<V>(
    bucket: (typeof b)[keyof typeof b],
    db: string,
    name: string,
    from: number,
    to: number,
  ): Promise<Timed<V>> {
    const out: Timed<V> = [];
    for await (const e of bucket.range<V>({ start: k(db, name, from), end: k(db, name, to) })) {
      out.push({ t: (e.key as KvKey[])[2] as number, v: e.value });
    }
    return out;
  }

  return {
    chunks: (db, name, from, to) => collect<Uint8Array>(b.raw, db, name, from, to),
    async chunksBackward(db, name, atOrBefore, limit) {
      const out: Timed<Uint8Array> = [];
      const it = b.raw.range<Uint8Array>({ start: k(db, name, atOrBefore), end: [db, name], reverse: true, limit });
      for await (const e of it) out.push({ t: (e.key as KvKey[])[2] as number, v: e.value });
      return out;
    },
    getChunks: (db, name, hours) => b.raw.getMany<Uint8Array>(hours.map((h) => k(db, name, h))),
    dayBlocks: (db, name, from, to) => collect<Uint8Array>(b.day, db, name, from, to),
    getDayBlocks: (db, name, days) => b.day.getMany<Uint8Array>(days.map((d) => k(db, name, d))),
    getMany: (bucket, refs) => b[bucket].getMany<Uint8Array>(refs.map((r) => k(r.db, r.name, r.t))),
    extras: (db, name, from, to) => collect<Extra>(b.extra, db, name, from, to),
    transitions: (db, name, from, to) => collect<number>(b.trans, db, name, from, to),
    async transitionAtOrBefore(db, name, ts) {
      for await (const e of b.trans.range<number>({
        start: k(db, name, ts),
        end: [db, name],
        reverse: true,
        limit: 1,
      })) {
        return { t: (e.key as KvKey[])[2] as number, v: e.value };
      }
      return undefined;
    },
    async allLatest() {
      const out: Array<{ db: string; name: string; v: LatestValue }> = [];
      for await (const e of b.latest.range<LatestValue>()) {
        const [db, name] = e.key as [string, string];
        out.push({ db, name, v: e.value });
      }
      return out;
    },
    async deleteSeries(db, name) {
      const range = { start: [db, name, -Infinity], end: [db, name, Infinity] };
      await Promise.all([b.raw, b.day, b.extra, b.trans].map((bk) => bk.deleteRange(range)));
      await b.latest.delete([db, name]);
    },
    async purgeSeries(db, name, rawBefore, rollupBefore) {
      const from = -Infinity;
      const n = await Promise.all([
        b.raw.deleteRange({ start: k(db, name, from), end: k(db, name, rawBefore) }),
        b.extra.deleteRange({ start: k(db, name, from), end: k(db, name, rawBefore) }),
        b.day.deleteRange({ start: k(db, name, from), end: k(db, name, rollupBefore) }),
        b.trans.deleteRange({ start: k(db, name, from), end: k(db, name, rollupBefore) }),
      ]);
      return n.reduce((a, c) => a + c, 0);
    },
    batch: (ops, fences) => store.batch(ops, fences?.length ? { fences } : undefined),
  };
}
