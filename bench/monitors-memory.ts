/**
 * npm run bench:monitors-memory — the heap a monitor definition costs once loaded from the store, on both drivers
 * (decision 181). Every instance keeps every definition in memory (monitors.repo.ts), loaded at start and, on a cluster
 * member, re-read on each change another instance makes. BENCH_MONITORS (default 50,000) url monitors are written to a
 * fresh LMDB store and a fresh PostgreSQL database (PG_URL names the server; skipped with a note when it cannot be
 * reached, a failure with CI=true), in two shapes: `seed` (the fields bench:cluster's monitors have) and `full` (the same
 * with the fields a user typically sets: method, accepted statuses, headers, a keyword and a note).
 * Each case loads them in a child process of its own (`node --expose-gc`): the heap its first load keeps (after a full
 * GC, before and after) and the load's time (median of BENCH_SAMPLES loads, default 3):
 * - `repo`: MonitorsRepo.load(), which compacts each definition's strings (compact-strings.ts);
 * - `raw` (the baseline, what the repo kept before): the same range read, each decoded record kept as decoded.
 * Last line: one JSON object, units in the names.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KvStore } from '../src/core/storage/kv-store.js';
import { openStore, type StoreConfig } from '../src/core/storage/open-store.js';
import { MonitorsRepo, type StoredMonitor } from '../src/monitor/monitors/monitors.repo.js';
import { createTestDatabase } from '../test/support/pg-database.fixture.js';
import { seedUrlMonitors } from '../test/support/seed-monitors.kit.js';

const N = Number(process.env.BENCH_MONITORS ?? 50_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 3);
const SELF = fileURLToPath(import.meta.url);
const SHAPES: Record<string, Record<string, string>> = {
  seed: {},
  full: {
    method: 'GET',
    acceptedStatus: '200-299',
    headers: 'Accept: application/json\nX-Request-Source: sentinel-monitoring',
    keyword: '"status":"ok"',
    notes: 'Owned by the payments team; page #payments-oncall before touching the load balancer.',
  },
};

type Mode = 'repo' | 'raw';

const heapAfterGc = (gc: () => void): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** One load: what the case keeps in memory. */
async function loadOnce(mode: Mode, kv: KvStore): Promise<unknown> {
  if (mode === 'repo') {
    const repo = new MonitorsRepo(kv);
    await repo.load();
    return repo;
  }
  const byName = new Map<string, StoredMonitor>();
  for await (const { value } of kv.bucket('monitors').range<StoredMonitor>()) byName.set(value.name, value);
  return byName;
}

/**
 * In the child: the heap the first load keeps (measured while it is the only one alive: a later sample's "before"
 * could still hold the previous load), then the median load time of SAMPLES loads.
 */
async function child(mode: Mode, store: StoreConfig): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const kv = await openStore(store);
  const before = heapAfterGc(gc);
  const t0 = performance.now();
  let kept = await loadOnce(mode, kv);
  const times = [performance.now() - t0];
  const keptB = heapAfterGc(gc) - before;
  kept = undefined;
  for (let s = 1; s < SAMPLES; s++) {
    const t = performance.now();
    kept = await loadOnce(mode, kv);
    times.push(performance.now() - t);
    kept = undefined;
  }
  if (kept !== undefined) throw new Error('unreachable');
  await kv.close();
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ heapB: keptB, loadMs: times[Math.floor(times.length / 2)] }));
}

function runChild(mode: Mode, store: StoreConfig): { heapB: number; loadMs: number } {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', SELF, '--child', mode, JSON.stringify(store)],
    { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as { heapB: number; loadMs: number };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-monitors-memory-'));
  const out: Record<string, number> = { monitors: N };
  const drops: Array<() => Promise<void>> = [];
  try {
    for (const [shape, extra] of Object.entries(SHAPES)) {
      const stores: Array<[string, StoreConfig]> = [['lmdb', { driver: 'lmdb', path: path.join(dir, shape) }]];
      const db = await createTestDatabase(`bench_monitors_memory_${shape}`);
      if ('unavailable' in db) {
        if (process.env.CI === 'true') throw new Error(db.unavailable);
        console.log(`${db.unavailable}: the PostgreSQL cases are skipped`);
      } else {
        drops.push(() => db.drop());
        stores.push(['pg', { driver: 'postgres', url: db.url, namespace: 'monitor' }]);
      }
      for (const [driver, store] of stores) {
        await seedUrlMonitors(store, N, {
          prefix: 'payments-checkout',
          url: (j) => `https://checkout-${j}.payments.example.com/health/ready`,
          timeout: '10',
          extra,
        });
        for (const mode of ['raw', 'repo'] as const) {
          const r = runChild(mode, store);
          const perMonitorB = Math.round(r.heapB / N);
          console.log(
            `${shape} ${driver} ${mode}: ${perMonitorB} B of heap per monitor, load ${Math.round(r.loadMs)} ms`,
          );
          out[`${shape}_${driver}_${mode}_heap_bytes_per_monitor`] = perMonitorB;
          out[`${shape}_${driver}_${mode}_load_ms`] = Math.round(r.loadMs);
        }
        const raw = out[`${shape}_${driver}_raw_heap_bytes_per_monitor`]!;
        const repo = out[`${shape}_${driver}_repo_heap_bytes_per_monitor`]!;
        out[`${shape}_${driver}_repo_vs_raw_heap_pct`] = Math.round((100 * repo) / raw);
      }
    }
  } finally {
    for (const drop of drops) await drop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify(out));
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Mode, JSON.parse(process.argv[4]!) as StoreConfig);
} else {
  await main();
}
