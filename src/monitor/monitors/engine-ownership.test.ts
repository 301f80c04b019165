/**
 * The engine in a cluster (engine.ts with a hand-driven Ownership): it schedules exactly the monitors of held shards,
 * an ownership change re-syncs only the monitors of the shards that changed hands (monitors.repo.ts shardIndex; a
 * pass over every monitor took 150–230 ms of the event loop per change at 50,000), a shard won after a gap runs
 * each of its monitors' missed occurrence once (unless a run started since), and a monitor held elsewhere has no
 * scheduler entry (decision 184) yet runs now and describes its schedule. Simulated time (clock.fake.ts), tcp
 * monitors at 1MIN.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import type { LeaseKey } from '../cluster/cluster-store.js';
import type { Lease, Ownership, OwnershipListener } from '../cluster/coordinator.js';
import { groupOf, shardOf } from '../cluster/shards.js';
import { tcpType } from '../monitor-types/tcp.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import { createFakeClock } from '../scheduler/clock.fake.js';
import { createMonitorSettings } from '../settings/monitor-settings.js';
import { createEngine } from './engine.js';
import { MonitorsRepo } from './monitors.repo.js';
import { MonitorsService } from './monitors.service.js';
import type { RunResult, RunService } from './run.service.js';

const MIN = 60_000;
const key = (k: LeaseKey | { group: string; shard: number }) => `${k.group}\u0000${k.shard}`;

/** An Ownership the test drives: `win` and `drop` change the held set and tell the listeners what changed. */
function handOwnership() {
  const held = new Map<string, Lease>();
  const listeners: OwnershipListener[] = [];
  const lease = (group: string, shard: number): Lease => ({
    group,
    shard,
    epoch: 1,
    validUntilMono: Infinity,
    fence: { key: `shard:${group}:${shard}`, epoch: 1 },
  });
  const own: Ownership = {
    leaseFor: (name, probe) => held.get(key({ group: groupOf(probe), shard: shardOf(name) })),
    leaseAt: (group, shard) => held.get(key({ group, shard })),
    holds: (l) => held.get(key(l)) === l,
    assignment: () => ({ group: '*', shard: 0, owner: null, epoch: null, here: false, unassigned: false }),
    onChange: (fn) => void listeners.push(fn),
    beforeRelease: () => undefined,
    noteResult: () => undefined,
    noteFenced: () => undefined,
  };
  return {
    own,
    win(shards: number[], missedForMs = 0) {
      const won = shards.map((s) => lease('*', s));
      for (const l of won) held.set(key(l), l);
      for (const fn of listeners)
        fn(
          won.map((l) => ({ ...l, missedForMs })),
          won,
        );
    },
    drop(shards: number[]) {
      const gone = shards.map((s) => held.get(key({ group: '*', shard: s }))!);
      for (const l of gone) held.delete(key(l));
      for (const fn of listeners) fn([], gone);
    },
  };
}

async function setup(lastRun = new Map<string, number>()) {
  const dir = await mkdtemp(join(tmpdir(), 'engine-own-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  const box = createSecretBox(crypto.randomBytes(32));
  const settings = createMonitorSettings(store, box, 'info');
  await settings.load();
  const monitors = new MonitorsService(new MonitorsRepo(store), new Map<DbName, MonitorType>([['tcp', tcpType]]), box);
  const names = Array.from({ length: 60 }, (_, i) => `m-${i}`);
  for (const name of names) await monitors.create('tcp', { name, ip: '127.0.0.1', port: '9', sched: '1MIN' });
  const clock = createFakeClock(Date.UTC(2026, 0, 1));
  const runs: string[] = [];
  const runner = {
    run: async (m: { name: string }) => {
      runs.push(m.name);
      return {} as RunResult;
    },
  } as unknown as RunService;
  const hand = handOwnership();
  const log = pino({ level: 'silent' });
  const engine = createEngine({
    monitors,
    runner,
    types: new Map(),
    settings,
    log,
    clock,
    ownership: hand.own,
    lastRunMs: (name) => lastRun.get(name),
  });
  const upserts: string[] = [];
  const upsert = engine.scheduler.upsert.bind(engine.scheduler);
  engine.scheduler.upsert = (id, spec, o) => {
    upserts.push(id);
    upsert(id, spec, o);
  };
  const shards = [...new Set(names.map(shardOf))];
  const inShards = (set: number[]) => names.filter((n) => set.includes(shardOf(n)));
  /** The monitors that ran in the next `minutes` of simulated time (`first` done at its start). */
  const ranIn = async (minutes: number, first?: () => void) => {
    runs.length = 0;
    first?.();
    await clock.advance(minutes * MIN);
    return [...new Set(runs)].sort();
  };
  return {
    clock,
    monitors,
    engine,
    hand,
    upserts,
    shards,
    inShards,
    ranIn,
    async close() {
      await clock.advanceUntil(engine.stop());
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

test('an ownership change schedules exactly the held shards and re-syncs only the shards that changed hands', async () => {
  const h = await setup();
  assert.ok(h.shards.length >= 6, 'the 60 monitors spread over several shards');
  const [a, b, c] = [h.shards.slice(0, 2), h.shards.slice(2, 4), h.shards.slice(4)];
  h.hand.win([...a, ...c]);
  h.engine.start();
  assert.deepEqual(await h.ranIn(2), h.inShards([...a, ...c]).sort(), 'only monitors of held shards run');

  h.upserts.length = 0;
  h.hand.win(b);
  assert.deepEqual(h.upserts.sort(), h.inShards(b).sort(), 'a win re-syncs the won shards only');
  h.upserts.length = 0;
  h.hand.drop(a);
  assert.deepEqual(h.upserts.sort(), h.inShards(a).sort(), 'a drop re-syncs the dropped shards only');
  assert.deepEqual(await h.ranIn(2), h.inShards([...b, ...c]).sort(), 'the won shards run, the dropped ones stop');
  await h.close();
});

test('the index follows definition changes: a monitor disabled, deleted or created is placed right for the next change', async () => {
  const h = await setup();
  const [a, b] = [h.shards.slice(0, 3), h.shards.slice(3)];
  h.hand.win(b);
  h.engine.start();
  const [off, gone] = h.inShards(a);
  await h.monitors.update('tcp', '1MIN', off!, { ip: '127.0.0.1', port: '9', sched: '1MIN', state: 'off' });
  await h.monitors.remove('1MIN', gone!);
  const fresh = Array.from({ length: 200 }, (_, i) => `new-${i}`).find((n) => a.includes(shardOf(n)))!;
  await h.monitors.create('tcp', { name: fresh, ip: '127.0.0.1', port: '9', sched: '1MIN' });
  h.hand.win(a);
  const expected = [...h.inShards(a).filter((n) => n !== off && n !== gone), fresh, ...h.inShards(b)].sort();
  assert.deepEqual(await h.ranIn(2), expected);
  await h.close();
});

test('a shard won after a gap runs each of its monitors once at once (catch-up), and only those', async () => {
  const h = await setup();
  const [a, b] = [h.shards.slice(0, 3), h.shards.slice(3)];
  h.hand.win(a);
  h.engine.start();
  await h.ranIn(1.5);
  // Within a second of the win (before the next 1MIN occurrence of most): every monitor of the won shards, once.
  assert.deepEqual(await h.ranIn(1 / 60, () => h.hand.win(b, 2 * MIN)), h.inShards(b).sort());
  await h.close();
});

test('a member keeps scheduler entries for held shards only; one held elsewhere runs now and describes its schedule', async () => {
  const h = await setup();
  const [a, b] = [h.shards.slice(0, 3), h.shards.slice(3)];
  const entries = () => h.inShards([...a, ...b]).filter((n) => h.engine.scheduler.has(n));
  assert.deepEqual(entries(), [], 'nothing held, no entry');
  h.hand.win([...a, ...b]);
  h.engine.start();
  assert.deepEqual(entries(), h.inShards([...a, ...b]));
  const away = h.inShards(a)[0]!;
  const heldInfo = h.engine.scheduleInfo(away)!;
  h.hand.drop(a);
  assert.deepEqual(entries(), h.inShards(b), 'a drop removes the entries of the shards dropped');
  assert.equal(h.engine.scheduler.stats().monitors, h.inShards(b).length);

  const info = h.engine.scheduleInfo(away)!;
  assert.deepEqual(
    [info.enabled, info.cron, info.offsetMs, info.spreadWindowMs, info.nextDueMs, info.running],
    [true, heldInfo.cron, heldInfo.offsetMs, heldInfo.spreadWindowMs, null, false],
    "described from the definition: the holder's offset, state on, not due here",
  );
  assert.deepEqual(await h.ranIn(1 / 60, () => void h.engine.runNow(away)), [away], 'run now runs it here');
  assert.equal(h.engine.scheduler.has(away), false, 'and keeps no entry after the run');
  assert.deepEqual(await h.ranIn(2), h.inShards(b).sort(), 'never scheduled here');
  await h.close();
});

test('catch-up skips a monitor whose latest run (here or on another member) started after the gap began', async () => {
  const lastRun = new Map<string, number>();
  const h = await setup(lastRun);
  const [a, b] = [h.shards.slice(0, 3), h.shards.slice(3)];
  h.hand.win(a);
  h.engine.start();
  await h.ranIn(1.5);
  // One whose own schedule does not fall in the next second (its due second ≠ now's, 30 s into the minute).
  const dueSecond = (n: string) => Math.floor(h.engine.scheduleInfo(n)!.offsetMs / 1000);
  const ranRecently = h.inShards(b).find((n) => Math.abs(dueSecond(n) - 30) > 2)!;
  lastRun.set(ranRecently, h.clock.now() - 1_000);
  const caughtUp = await h.ranIn(1 / 60, () => h.hand.win(b, 2 * MIN));
  assert.deepEqual(
    caughtUp,
    h
      .inShards(b)
      .filter((n) => n !== ranRecently)
      .sort(),
  );
  await h.close();
});
