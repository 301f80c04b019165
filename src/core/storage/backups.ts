/**
 * Scheduled backups, rotation and restore, for both services' stores (docs/operations.md "Backup and restore").
 *
 * - `startBackupSchedule`: every `intervalMs` a consistent online backup (`KvStore.backup`) into
 *   `<dir>/<service>-scheduled-<ISO time>.<mdb|kvdump>`, then rotation.
 * - `pruneBackups`: keeps the newest `keep` backups a service owns in a folder (its scheduled and manual ones; the
 *   `owns` predicate says which names are its); `*-pre-migration-*` backups are never pruned (the way back after an
 *   upgrade) and other files are left alone.
 * - `restoreStore`: loads a backup file into a service's configured store (LMDB directory or PostgreSQL namespace),
 *   refusing an existing store unless `force` (an LMDB directory is then moved aside, a namespace dropped).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { KvStore } from './kv-store.js';
import { openStore, type StoreConfig } from './open-store.js';

export const backupExt = (store: KvStore): string => (store.driver === 'lmdb' ? 'mdb' : 'kvdump');
const stamp = (ms: number) => new Date(ms).toISOString().replace(/[:.]/g, '-');

export async function pruneBackups(dir: string, owns: (file: string) => boolean, keep: number): Promise<string[]> {
  if (!fs.existsSync(dir)) return [];
  const ours = fs
    .readdirSync(dir)
    .filter((f) => owns(f) && !f.includes('-pre-migration-') && /\.(mdb|kvdump|dump)$/.test(f))
    .map((f) => ({ f, mtimeMs: fs.statSync(path.join(dir, f)).mtimeMs }))
    .sort((a, b) => b.mtimeMs - a.mtimeMs || b.f.localeCompare(a.f));
  const gone = ours.slice(Math.max(0, keep)).map((x) => x.f);
  for (const f of gone) fs.rmSync(path.join(dir, f), { force: true });
  return gone;
}

export interface BackupScheduleOptions {
  store: KvStore;
  service: string;
  dir: string;
  intervalMs: number;
  keep: number;
  owns: (file: string) => boolean;
  log: Logger;
  now?: () => number;
}

export interface BackupSchedule {
  /** One scheduled backup now (then rotation); resolves the file written. */
  runOnce(): Promise<string>;
  stop(): void;
}

export function startBackupSchedule(o: BackupScheduleOptions): BackupSchedule {
  const now = o.now ?? Date.now;
  let running: Promise<string> | undefined;
  const runOnce = async (): Promise<string> => {
    fs.mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    const file = path.join(o.dir, `${o.service}-scheduled-${stamp(now())}.${backupExt(o.store)}`);
    const bytes = await o.store.backup(file);
    const pruned = await pruneBackups(o.dir, o.owns, o.keep);
    o.log.info({ file, bytes, pruned }, 'scheduled backup written');
    return file;
  };
  const tick = () => {
    if (running) return; // the previous one is still writing
    running = runOnce()
      .catch((err: unknown) => {
        o.log.error({ err }, 'scheduled backup failed');
        return '';
      })
      .finally(() => (running = undefined));
  };
  const timer = o.intervalMs > 0 ? setInterval(tick, o.intervalMs) : undefined;
  timer?.unref();
  return {
    runOnce,
    stop: () => clearInterval(timer),
  };
}

export interface RestoreResult {
  target: string;
  entries?: number;
  movedAside?: string;
}

/** Restores `file` into the store `cfg` names. The service must be stopped (the caller checks). */
export async function restoreStore(file: string, cfg: StoreConfig, force: boolean): Promise<RestoreResult> {
  if (!fs.existsSync(file)) throw new Error(`no such backup file: ${file}`);
  const head = Buffer.alloc(10);
  const fd = fs.openSync(file, 'r');
  fs.readSync(fd, head, 0, 10, 0);
  fs.closeSync(fd);
  const isDump = head.toString() === 'SNTKVDUMP1';
  if (cfg.driver === 'lmdb') {
    let movedAside: string | undefined;
    if (fs.existsSync(path.join(cfg.path, 'data.mdb'))) {
      if (!force) throw new Error(`a store exists at ${cfg.path}: stop the service and pass --force to replace it`);
      movedAside = `${cfg.path}.before-restore-${stamp(Date.now())}`;
      fs.renameSync(cfg.path, movedAside);
    }
    if (!isDump) {
      const { restoreLmdbBackup } = await import('./lmdb-store.js');
      await restoreLmdbBackup(file, cfg.path);
      return { target: cfg.path, movedAside };
    }
    return { target: cfg.path, entries: await loadDump(file, cfg), movedAside };
  }
  if (!isDump) throw new Error('an LMDB backup (.mdb) cannot be restored into PostgreSQL: use a .kvdump');
  const existing = await openStore(cfg);
  const hasData = (await existing.buckets()).some((b) => b.keys > 0);
  await existing.close();
  if (hasData) {
    if (!force)
      throw new Error(`namespace ${cfg.namespace} holds data: stop the service and pass --force to replace it`);
    const { dropPostgresNamespace } = await import('./postgres-store.js');
    await dropPostgresNamespace(cfg.url, cfg.namespace);
  }
  return { target: `postgres namespace ${cfg.namespace}`, entries: await loadDump(file, cfg) };
}

async function loadDump(file: string, cfg: StoreConfig): Promise<number> {
  const { restoreDump } = await import('./kv-dump.js');
  const target = await openStore(cfg);
  try {
    return (await restoreDump(file, target)).entries;
  } finally {
    await target.close();
  }
}
