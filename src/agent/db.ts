/**
 * Database maintenance of the agent: online backup into `<DATA_DIR>/backups/`, reinit (drops metrics, thresholds and
 * status history under the store mutex, so a cycle in flight writes either before or after, never half; users,
 * settings, tokens and certificates stay), stats, and bucket/key reads of the discovery buckets only (DATA_BUCKETS;
 * any other bucket, users and settings included, is 404 like an unknown one).
 */
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../core/errors.js';
import type { KvStore } from '../core/storage/kv-store.js';
import { BUCKET_NAME_RE } from '../core/storage/kv-store.js';
import type { Mutex } from './discovery/lock.js';
import type { StatusBook } from './discovery/status.js';

export const DATA_BUCKETS = ['METRICS', 'THRESHOLDS', 'STATUS', 'STATUS_HISTORY'];
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
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  // Only the discovery data is readable here: users, tokens and settings (sealed secrets) are not.
  const bucketExists = async (name: string): Promise<boolean> => {
    if (!BUCKET_NAME_RE.test(name)) throw AppError.badRequest('invalid bucket name', 'params.bucket');
    if (!DATA_BUCKETS.includes(name)) return false;
    return (await deps.store.buckets()).some((b) => b.name === name && b.keys > 0);
  };
  return {
    async backup(): Promise<{ file: string; bytes: number; tookMs: number }> {
      const dir = path.join(deps.dataDir, 'backups');
      fs.mkdirSync(dir, { recursive: true });
      const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
      const file = path.join(dir, `agent-${stamp}.${deps.store.driver === 'lmdb' ? 'mdb' : 'dump'}`);
      const t0 = performance.now();
      const bytes = await deps.store.backup(file);
      return { file: path.basename(file), bytes, tookMs: Math.round(performance.now() - t0) };
    },
    async reinit(): Promise<{ dropped: string[] }> {
      return deps.mutex.run(async () => {
        await deps.store.dropBuckets(DATA_BUCKETS);
        await deps.status.load();
        return { dropped: DATA_BUCKETS };
      });
    },
    async stats() {
      const buckets = await deps.store.buckets();
      return { driver: deps.store.driver, buckets, totalKeys: buckets.reduce((a, b) => a + b.keys, 0) };
    },
    async get(bucket: string, key: string): Promise<unknown> {
      if (!(await bucketExists(bucket))) throw AppError.notFound(`no bucket ${bucket}`);
      const v = await deps.store.bucket(bucket).get(parseKey(key));
      if (v === undefined) throw AppError.notFound(`no key ${key} in bucket ${bucket}`);
      return v;
    },
    async all(bucket: string): Promise<Record<string, unknown>> {
      if (!(await bucketExists(bucket))) throw AppError.notFound(`no bucket ${bucket}`);
      const out: Record<string, unknown> = {};
      for await (const e of deps.store.bucket(bucket).range({ limit: MAX_ALL_JSON })) {
        out[Array.isArray(e.key) ? e.key.join(':') : String(e.key)] = e.value;
      }
      return out;
    },
  };
}

export type AgentDb = ReturnType<typeof createAgentDb>;
