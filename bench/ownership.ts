/**
 * What a cluster member's engine does when its held set changes (monitors/engine.ts, monitors/shard-index.ts), at
 * SIZES monitors (default 50,000 and 500,000 url monitors at 1MIN on LMDB; the store plays no part once loaded): the
 * event-loop time of one ownership change that moves ONE shard (a member dies or joins in a large cluster) and 64
 * shards (a quarter: a member joins a cluster of three), and — the baseline, measured in the same run — the same
 * one-shard move told as a change of all 256 shards, which re-syncs every monitor (parsing every schedule again) as
 * every ownership change did before the index (the old pass also counted the dispatch window and looked for catch-ups
 * over every monitor: the baseline leaves those out, so it understates the old cost). Also the index's own cost:
 * building it from the loaded monitors and its heap per monitor. And the scheduler's heap per monitor of the cluster:
 * a member holding a third of the shards keeps entries for its own monitors only (decision 184); the baseline, in the
 * same run, is an engine with an entry for every monitor (the single process, and every member before that decision).
 *
 * Run: npm run bench:ownership   (SIZES=50000,500000, ROUNDS=5 override). Last line: one JSON object.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { createSecretBox } from '../src/core/secrets/secret-box.js';
import { openLmdbStore } from '../src/core/storage/lmdb-store.js';
import type { LeaseKey } from '../src/monitor/cluster/cluster-store.js';
import type { Lease, Ownership, OwnershipListener } from '../src/monitor/cluster/coordinator.js';
import { groupOf, SHARD_COUNT, shardOf } from '../src/monitor/cluster/shards.js';
import { createEngine } from '../src/monitor/monitors/engine.js';
import { MonitorsRepo } from '../src/monitor/monitors/monitors.repo.js';
import { MonitorsService } from '../src/monitor/monitors/monitors.service.js';
import type { RunResult, RunService } from '../src/monitor/monitors/run.service.js';
import { createFakeClock } from '../src/monitor/scheduler/clock.fake.js';
import { createMonitorSettings } from '../src/monitor/settings/monitor-settings.js';
import { seedUrlMonitors } from '../test/support/seed-monitors.kit.js';

const SIZES = (process.env.SIZES ?? '50000,500000').split(',').map(Number);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const key = (group: string, shard: number) => `${group}\u0000${shard}`;

/** An Ownership holding a third of the shards, whose changes the bench makes by hand. */
function benchOwnership() {
  const held = new Map<string, Lease>();
  const listeners: OwnershipListener[] = [];
  const lease = (shard: number, epoch: number): Lease => ({
    group: '*',
    shard,
    epoch,
    validUntilMono: Infinity,
    fence: { key: `shard:*:${shard}`, epoch },
  });
  for (let s = 0; s < SHARD_COUNT; s += 3) held.set(key('*', s), lease(s, 1));
  const own: Ownership = {
    leaseFor: (name, probe) => held.get(key(groupOf(probe), shardOf(name))),
    leaseAt: (group, shard) => held.get(key(group, shard)),
    holds: () => true,
    assignment: () => ({ group: '*', shard: 0, owner: null, epoch: null, here: false, unassigned: false }),
    onChange: (fn) => void listeners.push(fn),
    beforeRelease: () => undefined,
    noteResult: () => undefined,
    noteFenced: () => undefined,
  };
  /**
   * Toggles each shard (held → dropped, not held → won) and tells the engine that they, or (`tellAll`) every shard,
   * changed hands; returns the ms it took.
   */
  const change = (shards: number[], epoch: number, tellAll = false): number => {
    const changed: LeaseKey[] = [];
    const won: Lease[] = [];
    for (const s of shards) {
      const k = key('*', s);
      const had = held.get(k);
      if (had) held.delete(k);
      else won.push(lease(s, epoch));
      changed.push(had ?? won[won.length - 1]!);
    }
    for (const l of won) held.set(key('*', l.shard), l);
    if (tellAll) {
      changed.length = 0;
      for (let s = 0; s < SHARD_COUNT; s++) changed.push({ group: '*', shard: s, epoch });
    }
    const t0 = performance.now();
    for (const fn of listeners)
      fn(
        won.map((l) => ({ ...l, missedForMs: 0 })),
        changed,
      );
    return performance.now() - t0;
  };
  return { own, change };
}

async function measure(n: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ownership-'));
  await seedUrlMonitors(path.join(dir, 'db'), n, { prefix: 'p', url: (j) => `http://127.0.0.1:9/${j}`, timeout: '10' });
  const store = await openLmdbStore({ path: path.join(dir, 'db'), noSync: true });
  const box = createSecretBox(crypto.randomBytes(32));
  const settings = createMonitorSettings(store, box, 'info');
  await settings.load();
  const repo = new MonitorsRepo(store);
  await repo.load();
  global.gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  repo.shardIndex();
  const buildMs = performance.now() - t0;
  global.gc?.();
  const indexBytesPerMonitor = (process.memoryUsage().heapUsed - heapBefore) / n;
  const monitors = new MonitorsService(repo, new Map(), box);
  const { own, change } = benchOwnership();
  const runner = { run: async () => ({}) as RunResult } as unknown as RunService;
  const clock = createFakeClock(Date.now());
  const engineDeps = { monitors, runner, types: new Map(), settings, log: pino({ level: 'silent' }), clock };
  const schedulerBytes = (make: () => unknown) => {
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    make(); // the engine stays alive through the listeners it registers, as in the service
    global.gc?.();
    return { perMonitor: (process.memoryUsage().heapUsed - before) / n };
  };
  const member = schedulerBytes(() => createEngine({ ...engineDeps, ownership: own }));
  const every = Array.from({ length: SHARD_COUNT }, (_, s) => s);
  const times = { one: [] as number[], quarter: [] as number[], all: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const epoch = 2 + r;
    const one = [(r * 7) % SHARD_COUNT];
    // Each change twice (away and back), so the held set is the same for every round.
    times.one.push(change(one, epoch), change(one, epoch));
    const quarter = every.filter((s) => s % 4 === r % 4);
    times.quarter.push(change(quarter, epoch), change(quarter, epoch));
    times.all.push(change(one, epoch, true), change(one, epoch, true));
  }
  const single = schedulerBytes(() => createEngine(engineDeps));
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const m = (xs: number[]) => Number(median(xs).toFixed(2));
  console.log(
    `${n} monitors: one shard ${m(times.one)} ms, 64 shards ${m(times.quarter)} ms, baseline (one shard, all re-synced) ` +
      `${m(times.all)} ms per change; index built in ${buildMs.toFixed(0)} ms, ${indexBytesPerMonitor.toFixed(0)} B/monitor; ` +
      `scheduler per monitor of the cluster: member holding a third ${member.perMonitor.toFixed(0)} B, ` +
      `an entry for every monitor (baseline) ${single.perMonitor.toFixed(0)} B`,
  );
  return {
    [`n${n}_oneShardChangeMs`]: m(times.one),
    [`n${n}_quarterChangeMs`]: m(times.quarter),
    [`n${n}_baselineFullResyncMs`]: m(times.all),
    [`n${n}_indexBuildMs`]: Math.round(buildMs),
    [`n${n}_indexBytesPerMonitor`]: Math.round(indexBytesPerMonitor),
    [`n${n}_memberSchedulerBytesPerMonitor`]: Math.round(member.perMonitor),
    [`n${n}_baselineEveryEntryBytesPerMonitor`]: Math.round(single.perMonitor),
  };
}

const out: Record<string, number> = { rounds: ROUNDS };
for (const n of SIZES) Object.assign(out, await measure(n));
console.log(JSON.stringify(out));
process.exit(0);
