/**
 * Three cluster members on one real PostgreSQL database (each its own PostgresStore, MonitorsService, engine,
 * RunService and coordinator), schedulers on one fake clock, leases on real time (short heartbeat and TTL). The
 * monitors' check is the recording target. Proves: every monitor runs exactly once per due time; a killed member's
 * shards move and its monitors run again within one interval; a paused member whose leases were taken records
 * nothing for them (runs skipped, in-flight results refused); probe affinity and unassigned monitors.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { pino } from 'pino';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openPostgresStore, type PostgresStore } from '../../core/storage/postgres-store.js';
import { tcpType } from '../monitor-types/tcp.js';
import type { DbName, MonitorType, NetworkPolicy } from '../monitor-types/types.js';
import { createFakeClock } from '../scheduler/clock.fake.js';
import { createMonitorSettings } from '../settings/monitor-settings.js';
import { createEngine, type Engine } from '../monitors/engine.js';
import { MonitorsRepo } from '../monitors/monitors.repo.js';
import { MonitorsService } from '../monitors/monitors.service.js';
import { RunService } from '../monitors/run.service.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../../../test/support/pg-database.fixture.js';
import { ClusterStore } from './cluster-store.js';
import { ClusterCoordinator } from './coordinator.js';
import { ANY_GROUP, SHARD_COUNT, rendezvousOwner } from './shards.js';

const log = pino({ level: 'silent' });
const MINUTE = 60_000;
const N = 240;
const TIMING = { heartbeatMs: 250, ttlMs: 3000 };
const box = createSecretBox(crypto.randomBytes(32));
const clock = createFakeClock(Date.UTC(2026, 0, 1));

interface Node {
  id: string;
  co: ClusterCoordinator;
  engine: Engine;
  kv: PostgresStore;
  cs: ClusterStore;
  checks: string[];
  recorded: string[];
  /** When set, checks wait for it (a check in flight while the member is paused). */
  hold?: Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`timed out waiting: ${what}`);
    await sleep(50);
  }
}

async function startNode(url: string, probe: string): Promise<Node> {
  const kv = await openPostgresStore({ url, namespace: 'monitor' });
  const settings = createMonitorSettings(kv, box, 'info');
  await settings.load();
  const repo = new MonitorsRepo(kv);
  await repo.load();
  const node = { checks: [], recorded: [] } as unknown as Node;
  const recording: MonitorType = {
    ...tcpType,
    check: async (config) => {
      node.checks.push(config.name);
      await node.hold;
      return { outcome: 'up', responseTimeMs: 1 };
    },
  };
  const types = new Map<DbName, MonitorType>([['tcp', recording]]);
  const monitors = new MonitorsService(repo, types, box);
  const runner = new RunService({
    monitors,
    types,
    log,
    policy: () => ({}) as NetworkPolicy,
    secrets: { get: async () => undefined },
    settings: { get: () => undefined },
    artifactRoot: '/nonexistent',
    sinks: { record: (m) => node.recorded.push(m.name) },
  });
  const cs = await ClusterStore.open(url, 'monitor');
  const id = `node-${probe}-${crypto.randomBytes(2).toString('hex')}`;
  const self = { id, probe, location: '', version: 't', address: '', startedMs: Date.now() };
  const co = new ClusterCoordinator({ store: cs, self, log, ...TIMING });
  const engine = createEngine({ monitors, runner, types, settings, log, clock, ownership: co });
  Object.assign(node, { id, co, engine, kv, cs });
  await co.start();
  return node;
}

/** Every '*' shard is held (valid) by exactly one of `nodes`: the one rendezvous hashing gives it to. */
function converged(nodes: Node[]): boolean {
  const members = nodes.map((n) => ({ id: n.id, probe: 'any' }));
  for (let s = 0; s < SHARD_COUNT; s++) {
    const holders = nodes.filter((n) => {
      const lease = n.co.view().held.find((l) => l.group === ANY_GROUP && l.shard === s);
      return lease !== undefined && n.co.holds(lease);
    });
    if (holders.length !== 1 || holders[0]!.id !== rendezvousOwner(ANY_GROUP, s, members)) return false;
  }
  return true;
}

const counts = (names: string[]) => {
  const m = new Map<string, number>();
  for (const n of names) m.set(n, (m.get(n) ?? 0) + 1);
  return m;
};

describe('cluster on PostgreSQL', async () => {
  const made = await createTestDatabase('cluster');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  const nodes: Node[] = [];
  const names = Array.from({ length: N }, (_, i) => `m${i}`);

  before(async () => {
    const kv = await openPostgresStore({ url: db.url, namespace: 'monitor' });
    const seed = new MonitorsService(new MonitorsRepo(kv), new Map([['tcp', tcpType]]), box);
    for (const name of names) await seed.create('tcp', { name, ip: '127.0.0.1', port: '9', sched: '1MIN' });
    await seed.create('tcp', { name: 'far', ip: '127.0.0.1', port: '9', sched: '1MIN', probe: 'us-1' });
    await kv.close();
    for (let i = 0; i < 3; i++) nodes.push(await startNode(db.url, 'eu-1'));
  });

  after(async () => {
    for (const n of nodes) {
      n.co.pause();
      await n.engine.stop();
      await n.cs.close().catch(() => undefined);
      await n.kv.close().catch(() => undefined);
    }
    await db.drop();
  });

  const checksOf = (ns: Node[]) => counts(ns.flatMap((n) => n.checks));
  const reset = () => nodes.forEach((n) => ((n.checks = []), (n.recorded = [])));
  const exactlyOnce = (ns: Node[], runs = 1) => {
    const c = checksOf(ns);
    const wrong = names.filter((n) => c.get(n) !== runs).map((n) => `${n}×${c.get(n) ?? 0}`);
    assert.deepEqual(wrong, [], 'monitors not run exactly once per due time');
  };

  it('every monitor runs exactly once per due time across 3 members; probe us-1 is unassigned', async () => {
    await until('3 members share the shards', () => converged(nodes));
    for (const n of nodes) n.engine.start();
    await clock.advance(3 * MINUTE - 1);
    exactlyOnce(nodes, 3);
    for (const n of nodes) assert.deepEqual(n.recorded, n.checks, 'every result recorded by the member that ran it');
    for (const n of nodes) assert.ok(n.checks.length > N / 10, 'each member runs a share');
    assert.equal(checksOf(nodes).get('far'), undefined);
    const a = nodes[0]!.co.assignment('far', 'us-1');
    assert.equal(a.unassigned, true);
    assert.equal(a.owner, null);
    const info = nodes[0]!.engine.scheduleInfo('far');
    assert.equal(info?.assignment?.unassigned, true);
    assert.equal(info?.enabled, true, 'state on, only unassigned');
  });

  it("history compaction: a monitor's holder compacts it; an unassigned one is compacted by the lowest live id", () => {
    // Every '*' monitor is compacted by exactly one member, the one running it.
    for (const name of names) {
      const by = nodes.filter((n) => n.co.compactsHistory(name, 'default'));
      assert.equal(by.length, 1, `${name}: ${by.map((n) => n.id).join(',')}`);
      assert.notEqual(by[0]!.co.leaseFor(name, 'default'), undefined, `${name} is compacted where it runs`);
    }
    // 'far' (us-1) runs nowhere, yet the rows written before its probe's last member left must still be compacted:
    // by one member, the one with the lowest id (docs/cluster.md "History").
    const lowest = [...nodes].sort((a, b) => (a.id < b.id ? -1 : 1))[0]!;
    assert.deepEqual(
      nodes.filter((n) => n.co.compactsHistory('far', 'us-1')).map((n) => n.id),
      [lowest.id],
    );
    // The fast path agrees with the assignment the API shows, for every monitor, probe group and member.
    for (const n of nodes)
      for (const [name, probe] of [...names.map((x) => [x, 'default']), ['far', 'us-1'], ['far', '*']] as const) {
        const a = n.co.assignment(name, probe);
        const lowestLive = n.co.view().members.every((m) => m.id >= n.id);
        assert.equal(n.co.compactsHistory(name, probe), a.here || (a.unassigned && lowestLive), `${n.id} ${name}`);
      }
  });

  it("a killed member's monitors run again within one interval, on the others", async () => {
    const dead = nodes[2]!;
    const its = new Set(names.filter((n) => dead.co.leaseFor(n, 'default') !== undefined));
    dead.co.pause();
    await dead.engine.stop();
    reset();
    await until("the others take the dead member's shards", () => converged(nodes.slice(0, 2)));
    await clock.advance(MINUTE);
    const c = checksOf(nodes.slice(0, 2));
    // Each ran within the interval; a monitor of the dead member's shards may run once more (the takeover runs what
    // fell due since the dead member's last renewal: at most one duplicate per handover).
    const wrong = names.filter((n) => {
      const k = c.get(n) ?? 0;
      return k < 1 || k > (its.has(n) ? 2 : 1);
    });
    assert.deepEqual(wrong, []);
    assert.equal(dead.checks.length, 0);
  });

  it('a paused member records nothing for the shards it lost (fencing), then rejoins', async () => {
    const [a, b] = nodes as [Node, Node];
    reset();
    let release!: () => void;
    b.hold = new Promise<void>((r) => (release = r));
    await clock.advance(MINUTE);
    exactlyOnce(nodes.slice(0, 2));
    assert.ok(b.checks.length > 0 && b.recorded.length === 0, "b's checks are in flight");
    b.co.pause();
    await until('a takes every shard over', () => converged([a]));
    release();
    b.hold = undefined;
    await clock.flush();
    await until('b finished its checks', () => b.engine.scheduler.stats().running === 0);
    assert.equal(b.recorded.length, 0, 'results of lost shards are refused');
    const fencedInFlight = b.co.selfFigures().fencedWrites;
    assert.ok(fencedInFlight >= b.checks.length);
    reset();
    await clock.advance(MINUTE);
    exactlyOnce([a, b]);
    assert.equal(b.checks.length, 0, 'a member past its lease starts no run of a lost shard');
    assert.ok(b.co.selfFigures().fencedWrites > fencedInFlight);
    b.co.resume();
    await until('b rejoins and holds a share again', () => converged([a, b]));
    reset();
    await clock.advance(MINUTE);
    exactlyOnce([a, b]);
    assert.ok(b.checks.length > 0);
  });

  it('probe affinity: a us-1 member runs the us-1 monitor, eu-1 members never do', async () => {
    const us = await startNode(db.url, 'us-1');
    nodes.push(us);
    await until('us-1 member holds the us-1 shard', () => us.co.assignment('far', 'us-1').here);
    await until('members converge', () => converged(nodes.filter((n) => n !== nodes[2])));
    us.engine.start();
    reset();
    await clock.advance(MINUTE);
    assert.deepEqual(
      nodes.map((n) => n.checks.filter((c) => c === 'far').length),
      [0, 0, 0, 1],
    );
    exactlyOnce(nodes);
  });
});
