/**
 * What GET /cluster answers: the live members (probe, location, version, address, last heartbeat, results recorded in
 * the last complete minute, refused writes), the shards each holds per probe group, and the monitors no live member
 * may run (their probe has no live instance). In single-process mode (LMDB) the one instance holds everything.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ClusterCoordinator, MemberIdentity } from './coordinator.js';
import type { ResultRate } from './result-rate.js';
import { ANY_GROUP, SHARD_COUNT, eligible, groupOf } from './shards.js';

const Member = Type.Object({
  id: Type.String(),
  self: Type.Boolean({ description: 'the instance that answered' }),
  probe: Type.String(),
  location: Type.String(),
  version: Type.String(),
  address: Type.String(),
  startedMs: Type.Number(),
  lastHeartbeatMs: Type.Number({ description: "PostgreSQL's clock, Unix ms" }),
  resultsPerMin: Type.Integer({ description: 'results recorded in the last complete minute' }),
  fencedWrites: Type.Integer({ description: 'results and runs refused since start because a shard lease was lost' }),
  clockOffsetMs: Type.Integer({
    description:
      "this instance's wall clock minus PostgreSQL's, from its heartbeats (0 in single mode); beyond ±2,000 ms result " +
      'timestamps and alert order disagree between instances: sync the clocks (NTP)',
  }),
  shardCount: Type.Integer({ description: 'shards held, all probe groups together' }),
  shards: Type.Record(Type.String(), Type.Array(Type.Integer()), {
    description: 'shards held per probe group ("*" = monitors any instance may run)',
  }),
});

export const CLUSTER_SCHEMA = Type.Object({
  mode: Type.Union([Type.Literal('single'), Type.Literal('cluster')]),
  self: Type.String(),
  shardsPerGroup: Type.Integer(),
  heartbeatMs: Type.Integer(),
  ttlMs: Type.Integer(),
  members: Type.Array(Member),
  unassigned: Type.Object({
    monitors: Type.Integer({ description: 'monitors whose probe has no live instance: they run nowhere' }),
    probes: Type.Array(
      Type.Object({ probe: Type.String(), monitors: Type.Integer(), examples: Type.Array(Type.String()) }),
    ),
  }),
});
export type ClusterInfo = Static<typeof CLUSTER_SCHEMA>;

export interface ClusterViewDeps {
  /** Every monitor's name and probe. */
  monitors: () => Iterable<{ name: string; probe: string | undefined }>;
  self: MemberIdentity;
  coordinator?: ClusterCoordinator;
  /** Single mode: the instance's own results per minute. */
  rate: ResultRate;
}

const allShards = (): number[] => Array.from({ length: SHARD_COUNT }, (_, i) => i);

export function clusterInfo(deps: ClusterViewDeps): ClusterInfo {
  const { coordinator: co, self } = deps;
  if (!co) {
    return {
      mode: 'single',
      self: self.id,
      shardsPerGroup: SHARD_COUNT,
      heartbeatMs: 0,
      ttlMs: 0,
      members: [
        {
          ...self,
          self: true,
          lastHeartbeatMs: Date.now(),
          resultsPerMin: deps.rate.perMinute(),
          fencedWrites: 0,
          clockOffsetMs: 0,
          shardCount: SHARD_COUNT,
          shards: { [ANY_GROUP]: allShards() },
        },
      ],
      unassigned: { monitors: 0, probes: [] },
    };
  }
  const { members, rows, held } = co.view();
  const shardsOf = new Map<string, Record<string, number[]>>(members.map((m) => [m.id, {}]));
  const add = (owner: string, group: string, shard: number) => {
    const per = shardsOf.get(owner);
    if (per) (per[group] ??= []).push(shard);
  };
  for (const r of rows) if (r.owner !== co.id && r.expiresMs > 0) add(r.owner, r.group, r.shard);
  for (const l of held) add(co.id, l.group, l.shard);
  const mine = co.selfFigures();
  return {
    mode: 'cluster',
    self: co.id,
    shardsPerGroup: SHARD_COUNT,
    heartbeatMs: co.heartbeatMs,
    ttlMs: co.ttlMs,
    members: members.map((m) => {
      const shards = shardsOf.get(m.id) ?? {};
      for (const list of Object.values(shards)) list.sort((a, b) => a - b);
      const figures = m.id === co.id ? mine : m;
      return {
        ...m,
        self: m.id === co.id,
        lastHeartbeatMs: m.heartbeatMs,
        resultsPerMin: figures.resultsPerMin,
        fencedWrites: figures.fencedWrites,
        clockOffsetMs: figures.clockOffsetMs,
        shardCount: Object.values(shards).reduce((n, l) => n + l.length, 0),
        shards,
      };
    }),
    unassigned: unassignedOf(deps.monitors(), members),
  };
}

function unassignedOf(
  monitors: Iterable<{ name: string; probe: string | undefined }>,
  members: ReadonlyArray<{ id: string; probe: string }>,
): ClusterInfo['unassigned'] {
  const byProbe = new Map<string, { probe: string; monitors: number; examples: string[] }>();
  const served = new Map<string, boolean>();
  let total = 0;
  for (const m of monitors) {
    const group = groupOf(m.probe);
    let ok = served.get(group);
    if (ok === undefined) served.set(group, (ok = members.some((x) => eligible(x, group))));
    if (ok) continue;
    total++;
    let e = byProbe.get(group);
    if (!e) byProbe.set(group, (e = { probe: group, monitors: 0, examples: [] }));
    e.monitors++;
    if (e.examples.length < 20) e.examples.push(m.name);
  }
  return { monitors: total, probes: [...byProbe.values()] };
}
