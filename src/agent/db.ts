/**
 * Database maintenance of the agent: online backup into `<DATA_DIR>/backups/`, reinit (drops metrics, thresholds and
 * status history under the store mutex, so a cycle in flight writes either before or after, never half; users,
 * settings, tokens and certificates stay), stats, and bucket/key reads of the discovery buckets only (DATA_BUCKETS;
 * any other bucket, users and settings included, is 404 like an unknown one; an empty one reads as {}).
 * Keys: STATUS and THRESHOLDS by metric key (`node_cpu`); the series buckets METRICS and STATUS_HISTORY hold points
 * `<key>:<timeMs>`, and a bare series key (`node_cpu`) reads its latest point.
 * Reads go through the swap gate and the reinit is a swap: a read never meets a half-dropped bucket (which LMDB
 * answered with "Invalid argument", a 500); it waits for the reinit or answers 503.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import type { KvStore } from '../core/storage/kv-store.js';
import { BUCKET_NAME_RE } from '../core/storage/kv-store.js';
import type { Mutex } from './discovery/lock.js';
import type { StatusBook } from './discovery/status.js';
import type { SwapGate } from './swap-gate.js';

export const DATA_BUCKETS = ['METRICS', 'THRESHOLDS', 'STATUS', 'STATUS_HISTORY'];
/** Buckets keyed [seriesKey, timeMs]. */
const SERIES_BUCKETS = ['METRICS', 'STATUS_HISTORY'];
const MAX_ALL_JSON = 10_000;

/** `name:1700000000000` addresses a series point [name, timeMs]; anything else is a plain string key. */
export function parseKey(raw: string): string | [string, number] {
  const m = /^(.+):(\d{1,16})$/.exec(raw);
  return m ? [m[1]!, Number(m[2])] : raw;
}

export function createAgentDb(deps: {
  store: KvStore;
  dataDir: string;
  mutex: Mutex;
  status: StatusBook;
  gate: SwapGate;
  now?: () => number;
  /** Rotation after each backup (BACKUPS_KEPT). */
  afterBackup?: () => Promise<void>;
}) {
  const now = deps.now ?? Date.now;
  const { gate } = deps;
  // Only the discovery data is readable here: users, tokens and settings (sealed secrets) are not. A data bucket
  // exists from the start (empty until a cycle writes to it).
  const bucketExists = (name: string): boolean => {
    if (!BUCKET_NAME_RE.test(name)) throw AppError.badRequest('invalid bucket name', 'params.bucket');
    return DATA_BUCKETS.includes(name);
  };
  /** The newest point of a series key in a series bucket. */
  const latest = async (bucket: string, key: string): Promise<{ value: unknown; timeMs: number } | undefined> => {
    const range = deps.store
      .bucket(bucket)
      .range({ start: [key, Number.MAX_SAFE_INTEGER], end: [key, -1], reverse: true, limit: 1 });
    for await (const e of range) return { value: e.value, timeMs: (e.key as [string, number])[1] };
    return undefined;
  };
  return {
    async backup(): Promise<{ file: string; bytes: number; tookMs: number }> {
      const dir = path.join(deps.dataDir, 'backups');
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
      const file = path.join(dir, `agent-${stamp}.${deps.store.driver === 'lmdb' ? 'mdb' : 'dump'}`);
      const t0 = performance.now();
      const bytes = await gate.read(() => deps.store.backup(file));
      await deps.afterBackup?.();
      return { file: path.basename(file), bytes, tookMs: Math.round(performance.now() - t0) };
    },
    async reinit(): Promise<{ dropped: string[] }> {
      return deps.mutex.run(() =>
        gate.swap(async () => {
          await deps.store.dropBuckets(DATA_BUCKETS);
          await deps.status.load();
          return { dropped: DATA_BUCKETS };
        }),
      );
    },
    async stats() {
      const buckets = await gate.read(() => deps.store.buckets());
      return { driver: deps.store.driver, buckets, totalKeys: buckets.reduce((a, b) => a + b.keys, 0) };
    },
    /** One entry; a bare series key in a series bucket gives its latest point with its timeMs. */
    async get(bucket: string, key: string): Promise<{ value: unknown; timeMs?: number }> {
      if (!bucketExists(bucket)) throw AppError.notFound(`no bucket ${bucket}`);
      const k = parseKey(key);
      const found = await gate.read(async () => {
        const v = await deps.store.bucket(bucket).get(k);
        if (v !== undefined) return { value: v };
        return typeof k === 'string' && SERIES_BUCKETS.includes(bucket) ? await latest(bucket, k) : undefined;
      });
      if (found === undefined) throw AppError.notFound(`no key ${key} in bucket ${bucket}`);
      return found;
    },
    async all(bucket: string): Promise<Record<string, unknown>> {
      if (!bucketExists(bucket)) throw AppError.notFound(`no bucket ${bucket}`);
      return gate.read(async () => {
        const out: Record<string, unknown> = {};
        for await (const e of deps.store.bucket(bucket).range({ limit: MAX_ALL_JSON })) {
          out[Array.isArray(e.key) ? e.key.join(':') : String(e.key)] = e.value;
        }
        return out;
      });
    },
  };
}

export type AgentDb = ReturnType<typeof createAgentDb>;
