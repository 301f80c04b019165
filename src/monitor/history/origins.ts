/**
 * Where results come from: the `origins` dictionary (format 1) maps a small id → the probe, location and instance
 * (INSTANCE, by default the host name) of the monitor-service process that ran a check. Each result row carries only
 * the id (result-codec.ts: a per-chunk table, ~0 bytes per row), the dictionary names it.
 *
 *   origins   id → { v: 1, probe, location, instance }
 *
 * Each process registers its own origin at start, with no coordination in a cluster: the id is a stable hash of the
 * content in [1, 16384) (a 2-byte varint in a chunk; 0 = unknown), so every start of the same probe/location/host
 * finds the entry it wrote before. A collision (the slot holds another origin) moves on to the next id (linear
 * probing, unbounded: ids ≥ 16384 only cost a byte more); two processes with different origins racing for one free
 * slot are serialised by a store claim on the slot (owned by the content, so identical origins never block each
 * other), and the loser moves on. Entries are never rewritten or deleted, so an id names one origin forever.
 */
import { createHash } from 'node:crypto';
import type { KvStore } from '../../core/storage/kv-store.js';

export const ORIGINS_BUCKET = 'origins';
/** The id space of the first probe (ids below it are 1 or 2 varint bytes). */
const HASH_SPACE = 16_384;
const CLAIM_TTL_MS = 30_000;

export interface ResultOrigin {
  /** The instance's PROBE. */
  probe: string;
  /** The instance's LOCATION ('' when unset). */
  location: string;
  /** The host the instance runs on. */
  instance: string;
}

interface StoredOrigin extends ResultOrigin {
  v: 1;
}

const contentKey = (o: ResultOrigin): string => JSON.stringify([o.probe, o.location, o.instance]);

/** The first id tried for an origin: a stable hash of its content in [1, HASH_SPACE). */
export function originHash(o: ResultOrigin): number {
  const h = createHash('sha256').update(contentKey(o)).digest().readUInt32BE(0);
  return 1 + (h % (HASH_SPACE - 1));
}

export class OriginRegistry {
  private readonly byId = new Map<number, ResultOrigin>();

  constructor(private readonly store: KvStore) {}

  /** The id of `o`, registering it when it is new (see the file comment). */
  async register(o: ResultOrigin): Promise<number> {
    const bucket = this.store.bucket(ORIGINS_BUCKET);
    const key = contentKey(o);
    for (let id = originHash(o); ; id++) {
      const stored = await bucket.get<StoredOrigin>(id);
      if (stored && contentKey(stored) === key) return this.keep(id, stored);
      if (stored) continue; // a collision: the next slot
      const slot = `origin:${id}`;
      if (!(await this.store.claims.claim([slot], key, CLAIM_TTL_MS)).includes(slot)) continue; // another origin's
      try {
        const again = await bucket.get<StoredOrigin>(id);
        if (again && contentKey(again) !== key) continue;
        const value: StoredOrigin = { v: 1, probe: o.probe, location: o.location, instance: o.instance };
        if (!again) await bucket.put(id, value);
        return this.keep(id, value);
      } finally {
        await this.store.claims.release([slot], key);
      }
    }
  }

  /** The origin of an id already loaded (register/load/resolve); undefined for 0, unknown or not loaded ids. */
  get(id: number | undefined): ResultOrigin | undefined {
    return id ? this.byId.get(id) : undefined;
  }

  /** Loads the whole dictionary (at start: a few entries per instance ever started). */
  async load(): Promise<void> {
    for await (const { key, value } of this.store.bucket(ORIGINS_BUCKET).range<StoredOrigin>())
      if (typeof key === 'number') this.keep(key, value);
  }

  /** Makes `get` answer for these ids (reads those not loaded yet: another instance registered them since). */
  async resolve(ids: Iterable<number | undefined>): Promise<void> {
    const missing = [...new Set(ids)].filter((id): id is number => !!id && !this.byId.has(id));
    if (missing.length === 0) return;
    const got = await this.store.bucket(ORIGINS_BUCKET).getMany<StoredOrigin>(missing);
    missing.forEach((id, i) => {
      if (got[i]) this.keep(id, got[i]);
    });
  }

  private keep(id: number, o: ResultOrigin): number {
    this.byId.set(id, { probe: o.probe, location: o.location, instance: o.instance });
    return id;
  }
}

/** A result's origin as API fields (`probe`, `location`, `instance`); nothing when unknown. */
export function originFields(o: ResultOrigin | undefined): Partial<ResultOrigin> {
  return o ? { probe: o.probe, location: o.location, instance: o.instance } : {};
}
