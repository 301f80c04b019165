/**
 * POST /backupDatabase {database}: "the named database" is one of the 9 dbnames, but all monitor types live in one
 * KvStore (one LMDB environment or one PostgreSQL namespace), and only a whole-store snapshot is consistent across
 * buckets (history chunks, rollups, latest, monitors, users, settings written in atomic batches). So the backup is
 * the store's own online consistent backup (`KvStore.backup`), taken while checks keep writing, written to
 * `<DATA_DIR>/backups/<dbname>-<yyyymmdd-hhmmss>-<rand>.<ext>` (ext `mdb` for LMDB, `kvdump` for the dump format of
 * other drivers). The dbname only labels the file. Restore (docs/reporting.md):
 *   LMDB:      restoreLmdbBackup(file, newDir) → openLmdbStore({ path: newDir })  (or copy the file to <dir>/data.mdb)
 *   kvdump:    restoreDump(file, freshStore)
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { AppError } from '../../core/errors.js';
import type { BucketInfo, KvStore } from '../../core/storage/kv-store.js';
import { isDbName, type DbName } from '../history/types.js';

export interface BackupResult {
  database: DbName;
  file: string;
  path: string;
  bytes: number;
  driver: string;
  tookMs: number;
}

export interface DbAdmin {
  stats(): Promise<{ driver: string; buckets: BucketInfo[]; totalKeys: number; totalBytes?: number }>;
  bucketNames(): Promise<string[]>;
  backup(database: unknown): Promise<BackupResult>;
}

function stamp(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

export function createDbAdmin(deps: {
  store: KvStore;
  dataDir: string;
  clock?: () => number;
  /** Rotation after each backup (BACKUPS_KEPT). */
  afterBackup?: () => Promise<void>;
}): DbAdmin {
  const clock = deps.clock ?? Date.now;
  return {
    async stats() {
      const buckets = (await deps.store.buckets()).sort((a, b) => a.name.localeCompare(b.name));
      const totalKeys = buckets.reduce((a, b) => a + b.keys, 0);
      const known = buckets.every((b) => b.bytes !== undefined);
      return {
        driver: deps.store.driver,
        buckets,
        totalKeys,
        ...(known ? { totalBytes: buckets.reduce((a, b) => a + (b.bytes ?? 0), 0) } : {}),
      };
    },
    async bucketNames() {
      return (await deps.store.buckets()).map((b) => b.name).sort();
    },
    async backup(database) {
      // Only the 9 dbnames: nothing from the request reaches the path but a whitelisted word.
      if (typeof database !== 'string' || !isDbName(database)) {
        throw AppError.badRequest(
          'database must be one of exec, url, api, tcp, ping, nslookup, snmp, db, sys',
          'database',
        );
      }
      const start = clock();
      const ext = deps.store.driver === 'lmdb' ? 'mdb' : 'kvdump';
      const file = `${database}-${stamp(start)}-${randomBytes(3).toString('hex')}.${ext}`;
      const path = join(deps.dataDir, 'backups', file);
      const bytes = await deps.store.backup(path);
      await deps.afterBackup?.();
      return { database, file, path, bytes, driver: deps.store.driver, tookMs: Date.now() - start };
    },
  };
}
