/** Shared helpers of the reporting tests (not used by production code). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openLmdbStore, type LmdbStore } from '../../core/storage/lmdb-store.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import { HOUR_MS } from '../../core/time.js';
import { createHistoryService, type HistoryService, type HistoryServiceOptions } from './history.service.js';

export const silent = pino({ level: 'silent' });

/**
 * Options of one cluster instance's history in the cluster tests: an injected clock and held set, timers that never
 * fire during a test (flush, follow and purge are called by the test), a 10-s close grace.
 */
export function clusterHistoryOptions(
  store: KvStore,
  clock: { now: number },
  held: ReadonlySet<string>,
): HistoryServiceOptions {
  return {
    store,
    log: silent,
    clock: () => clock.now,
    retentionHours: () => 24 * 365,
    flushIntervalMs: HOUR_MS,
    purgeIntervalMs: 0,
    followIntervalMs: HOUR_MS,
    closeGraceMs: 10_000,
    holds: (_db, name) => held.has(name),
  };
}

export interface Fixture {
  dir: string;
  store: LmdbStore;
  history: HistoryService;
  clock: { now: number };
  reopen(): Promise<void>;
  cleanup(): Promise<void>;
}

export async function fixture(
  opts: Partial<HistoryServiceOptions> = {},
  nowMs = Date.UTC(2026, 0, 10, 12, 30),
): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'hist-test-'));
  const clock = { now: nowMs };
  const open = async (): Promise<{ store: LmdbStore; history: HistoryService }> => {
    const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
    const history = await createHistoryService({
      store,
      log: silent,
      clock: () => clock.now,
      retentionHours: () => 24 * 365,
      flushIntervalMs: 60_000,
      ...opts,
    });
    return { store, history };
  };
  const f = { dir, clock, ...(await open()) } as Fixture;
  f.reopen = async () => {
    await f.history.close();
    await f.store.close();
    Object.assign(f, await open());
  };
  f.cleanup = async () => {
    await f.history.close().catch(() => undefined);
    await f.store.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  return f;
}
