/**
 * Store format versions and migrations. Each service's store carries one record, `meta/format`:
 *
 *   { metaVersion: 1, version: <number of migrations applied>, applied: [{ id, atMs }], formats: {...}, writtenBy }
 *
 * The format version of a store is the list of migrations applied to it. A service passes its ordered list of
 * migrations (core's, then its own: see core-migrations.ts, src/monitor/migrations.ts, src/agent/migrations.ts) to
 * `migrateStore` right after opening the store and before anything else reads or writes it:
 *
 * - a store that records a migration id this build does not know was written by a newer version: refused with a clear
 *   message (StoreTooNewError) and nothing written;
 * - every known migration not yet recorded runs, in list order, and is recorded (one record write per migration, after
 *   it succeeded); a store with data is backed up first (`<dataDir>/backups/<service>-pre-migration-<ts>.<ext>`);
 * - a migration must be idempotent: a crash between its writes and its record runs it again on the next start.
 *
 * A new empty store runs every migration too (on no data they do nothing) so there is one path, tested once.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { KvStore } from './kv-store.js';

export const META_BUCKET = 'meta';
export const FORMAT_KEY = 'format';

export interface MigrationContext {
  store: KvStore;
  /** The service's DATA_DIR (for migrations of files kept beside the store). */
  dataDir: string;
  service: string;
  log: Logger;
}

export interface Migration {
  /** Unique and never reused or renamed: `<yyyy-mm-dd>-<what>`, e.g. `2026-11-26-users-email-lowercase`. */
  id: string;
  /** One line for the log: what changes on disk. */
  description: string;
  /** Rewrites old records into the new format. Must be idempotent (it may run again on records already new). */
  up(ctx: MigrationContext): Promise<void>;
}

export interface FormatRecord {
  metaVersion: 1;
  version: number;
  applied: Array<{ id: string; atMs: number }>;
  /** The per-format versions this build writes (informational: docs/storage.md lists them). */
  formats: Record<string, number>;
  writtenBy: string;
}

export class StoreTooNewError extends Error {
  constructor(
    readonly service: string,
    readonly unknownIds: string[],
  ) {
    super(
      `the ${service} store was written by a newer version of this software (it records migrations this build does ` +
        `not know: ${unknownIds.join(', ')}); refusing to start so nothing is changed. Run the newer version, or ` +
        `restore a backup taken before the upgrade (docs/operations.md).`,
    );
    this.name = 'StoreTooNewError';
  }
}

export interface MigrateOptions {
  migrations: readonly Migration[];
  dataDir: string;
  service: string;
  log: Logger;
  /** Per-format versions this build writes (stored in the record). */
  formats?: Record<string, number>;
  writtenBy?: string;
  now?: () => number;
}

export interface MigrateResult {
  version: number;
  ran: string[];
  backupFile?: string;
}

/** Throws on duplicate ids (a registry mistake caught by any test that opens a store). */
function checkRegistry(list: readonly Migration[]): void {
  const seen = new Set<string>();
  for (const m of list) {
    if (seen.has(m.id)) throw new Error(`migration id registered twice: ${m.id}`);
    seen.add(m.id);
  }
}

export async function readFormat(store: KvStore): Promise<FormatRecord | undefined> {
  return store.bucket(META_BUCKET).get<FormatRecord>(FORMAT_KEY);
}

/** True when the store holds any key outside the meta bucket. */
async function hasData(store: KvStore): Promise<boolean> {
  return (await store.buckets()).some((b) => b.name !== META_BUCKET && b.keys > 0);
}

export async function migrateStore(store: KvStore, o: MigrateOptions): Promise<MigrateResult> {
  checkRegistry(o.migrations);
  const now = o.now ?? Date.now;
  const current = await readFormat(store);
  const known = new Set(o.migrations.map((m) => m.id));
  const applied = current?.applied ?? [];
  const unknown = applied.map((a) => a.id).filter((id) => !known.has(id));
  for (const [name, v] of Object.entries(current?.formats ?? {})) {
    const ours = o.formats?.[name];
    if (ours !== undefined && v > ours) unknown.push(`${name} format ${v} (this build writes ${ours})`);
  }
  if (unknown.length > 0) throw new StoreTooNewError(o.service, unknown);
  const done = new Set(applied.map((a) => a.id));
  const pending = o.migrations.filter((m) => !done.has(m.id));
  const record: FormatRecord = {
    metaVersion: 1,
    version: applied.length,
    applied: [...applied],
    formats: o.formats ?? {},
    writtenBy: o.writtenBy ?? 'unknown',
  };
  let backupFile: string | undefined;
  if (pending.length > 0 && (await hasData(store))) {
    const dir = path.join(o.dataDir, 'backups');
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date(now()).toISOString().replace(/[:.]/g, '-');
    backupFile = path.join(dir, `${o.service}-pre-migration-${stamp}.${store.driver === 'lmdb' ? 'mdb' : 'kvdump'}`);
    await store.backup(backupFile);
    o.log.warn({ backupFile, pending: pending.map((m) => m.id) }, 'store needs migrations; backed up first');
  }
  const ctx: MigrationContext = { store, dataDir: o.dataDir, service: o.service, log: o.log };
  for (const m of pending) {
    const t0 = performance.now();
    await m.up(ctx);
    record.applied.push({ id: m.id, atMs: now() });
    record.version = record.applied.length;
    await store.bucket(META_BUCKET).put(FORMAT_KEY, record);
    o.log.info({ migration: m.id, tookMs: Math.round(performance.now() - t0) }, `migration applied: ${m.description}`);
  }
  const changed =
    current === undefined ||
    current.writtenBy !== record.writtenBy ||
    JSON.stringify(current.formats) !== JSON.stringify(record.formats);
  if (pending.length === 0 && changed) await store.bucket(META_BUCKET).put(FORMAT_KEY, record);
  return { version: record.version, ran: pending.map((m) => m.id), backupFile };
}
