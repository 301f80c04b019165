/**
 * What a cluster member pays to ask "do I compact this monitor's history?" (ClusterCoordinator.compactsHistory): the
 * history flush asks it for every series it writes, and the follower for every followed row (most of a member's
 * followed rows are of shards another member holds). Three real coordinators on a fresh PostgreSQL database hold the
 * 256 shards between them; member 0 is asked for NAMES url monitor names (default 50,000, probe 'default'), ROUNDS
 * times. The baseline, in the same run, is the way the answer was found before 2026-11-29: the held lease first, then an
 * Assignment object for a shard held elsewhere (a second name hash, the lease rows and the rendezvous owner).
 *
 * Run: npm run bench:compacts-history   (NAMES, ROUNDS override). Last line: one JSON object.
 */
import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { ClusterStore } from '../src/monitor/cluster/cluster-store.js';
import { ClusterCoordinator } from '../src/monitor/cluster/coordinator.js';
import { ANY_GROUP, SHARD_COUNT } from '../src/monitor/cluster/shards.js';
import { createTestDatabase } from '../test/support/pg-database.fixture.js';

const NAMES = Number(process.env.NAMES ?? 50_000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const log = pino({ level: 'silent' });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The answer as compactsHistory found it before (coordinator.ts at 577d159), from the public methods. */
function before(co: ClusterCoordinator, name: string, probe: string): boolean {
  if (co.leaseFor(name, probe)) return true;
  const a = co.assignment(name, probe);
  return a.here || (a.unassigned && co.view().members.every((m) => m.id >= co.id));
}

/** ns per call of `ask` over every name, the median of ROUNDS (after one warm-up round). */
function time(names: string[], ask: (name: string) => boolean): { nsPerCall: number; yes: number } {
  const ns: number[] = [];
  let yes = 0;
  for (let r = 0; r <= ROUNDS; r++) {
    yes = 0;
    const t0 = process.hrtime.bigint();
    for (const n of names) if (ask(n)) yes++;
    if (r > 0) ns.push(Number(process.hrtime.bigint() - t0) / names.length);
  }
  return { nsPerCall: Math.round(median(ns) * 10) / 10, yes };
}

const made = await createTestDatabase('bench_compacts');
if ('unavailable' in made) throw new Error(made.unavailable);
const nodes: Array<{ co: ClusterCoordinator; cs: ClusterStore }> = [];
try {
  for (let i = 0; i < 3; i++) {
    const cs = await ClusterStore.open(made.url, 'monitor');
    const self = {
      id: `bench-${i}-${crypto.randomBytes(2).toString('hex')}`,
      probe: 'bench',
      location: '',
      version: 'b',
    };
    const co = new ClusterCoordinator({
      store: cs,
      self: { ...self, address: '', startedMs: Date.now() },
      log,
      heartbeatMs: 300,
      ttlMs: 1_500,
    });
    await co.start();
    nodes.push({ co, cs });
  }
  // Every '*' shard held by one member (the others' heartbeats hand over what they took before the third joined).
  const deadline = Date.now() + 30_000;
  const held = () => nodes.reduce((sum, n) => sum + n.co.view().held.filter((l) => l.group === ANY_GROUP).length, 0);
  while (held() !== SHARD_COUNT || nodes.some((n) => n.co.view().held.length === 0)) {
    if (Date.now() > deadline) throw new Error(`shards not spread: ${held()} held`);
    await sleep(100);
  }
  const co = nodes[0]!.co;
  const names = Array.from({ length: NAMES }, (_, i) => `b${i}`);
  const now = time(names, (n) => co.compactsHistory(n, 'default'));
  const old = time(names, (n) => before(co, n, 'default'));
  if (now.yes !== old.yes) throw new Error(`answers differ: ${now.yes} against ${old.yes}`);
  const out = {
    names: NAMES,
    held_here_pct: Math.round((now.yes / NAMES) * 1000) / 10,
    compacts_history_ns_per_call: now.nsPerCall,
    baseline_assignment_ns_per_call: old.nsPerCall,
    baseline_vs_now_x: Math.round((old.nsPerCall / now.nsPerCall) * 100) / 100,
  };
  console.log(`member 0 holds ${out.held_here_pct} % of ${NAMES} monitors' shards; ns per call, median of ${ROUNDS}`);
  console.log(JSON.stringify(out));
} finally {
  for (const n of nodes) await n.co.stop();
  for (const n of nodes) await n.cs.close();
  await made.drop();
}
