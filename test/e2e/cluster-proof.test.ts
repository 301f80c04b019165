/**
 * Issue 16's proof, on loopback and one fresh PostgreSQL database: three monitor services as real processes running
 * the compiled build (dist/monitor/main.js, PROBE eu-1, one shared CA and key files), 3,000 url monitors at 1MIN plus
 * 30 of probe us-1, against a recording target in a child process (test/support/recording-target.fixture.ts) that notes each
 * GET with the monitor's name; a webhook channel to a local receiver; 30 monitors answered 500 so they alert.
 * In order, on the same cluster (default timing: heartbeat 5 s, lease 15 s, as in production):
 * 1. every monitor runs exactly once a minute over 3 minutes (0 missed, 0 duplicates, by the gaps between runs);
 * 2. kill -9 of one instance: each of its monitors runs again within one interval, at most one duplicate each;
 *    restarted on its DATA_DIR it owns a share again within 30 s;
 * 3. SIGSTOP of one instance past its lease, then SIGCONT: the runs it had in flight (held by the target, then
 *    answered 500) write no result and send no alert, and it runs nothing of the shards it lost (fencing). The
 *    target attributes each request to the member process that sent it (the client end's socket in /proc), and a
 *    stale run is one the paused process made on a connection opened after SIGCONT that arrived while the monitor's
 *    shard still had the epoch it had before SIGCONT (so some other member held it); its runs of shards it won back
 *    under new epochs (rendezvous hashing) are legitimate even right after the successor's run;
 * 4. no alert was sent twice across those handovers: each failing monitor alerted, and no monitor had one transition
 *    alerted twice (counted per delivery id: a resend after kill -9 carries the same Idempotency-Key, decision 157);
 * 5. the us-1 monitors never run (no us-1 instance) and are reported unassigned in GET /cluster and GET /monitors.
 * Change propagation (create on A, run now and details on C) is proven by test/engine/cluster-propagation.test.ts,
 * probe affinity with a live us-1 instance by test/engine/cluster-api.test.ts. Figures are printed (docs/cluster.md).
 * Bounds are behaviour bounds (one interval, a lease), every wait is a poll with a generous limit.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { rendezvousOwner, shardOf } from '../../src/monitor/cluster/shards.js';
import { makeTestTls, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receivers.fixture.js';
import { ensureBuilt, ROOT } from '../support/build.kit.js';
import {
  holdersOf,
  leaseHolders,
  runStats,
  shardLeases,
  spreadOver,
  startServiceProcess,
  stopWhileIdle,
  waitForHolders,
  type ServiceProcess,
  type ShardLease,
} from '../support/cluster-fleet.harness.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { sharedDataDir } from '../support/monitor.harness.js';
import { createTestDatabase, reportUnavailable, type TestDatabase } from '../support/pg-database.fixture.js';
import {
  startRecordingTarget,
  type Arrivals,
  type RecordingTarget,
  type Runs,
} from '../support/recording-target.fixture.js';
import { seededName, seedUrlMonitors } from '../support/seed-monitors.kit.js';

const N = 3000;
const MIN_MS = 60_000;
const ADMIN_PASSWORD = 'cluster-proof-admin-1';
const NAMES = Array.from({ length: N }, (_, j) => seededName('p', j));
const US_NAMES = Array.from({ length: 30 }, (_, j) => seededName('us', j));
const FAILING = NAMES.filter((_, j) => j % 100 === 7);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Member {
  proc: ServiceProcess;
  api: HttpsClient;
}

/** The monitors of the '*' shards `member` holds now. */
async function monitorsOf(db: pg.Client, m: Member): Promise<string[]> {
  const shards = new Set([...(await leaseHolders(db))].find(([id]) => m.proc.isMember(id))?.[1] ?? []);
  return NAMES.filter((n) => shards.has(shardOf(n)));
}

/**
 * Polls the shard rows every 100 ms until `done` holds for their live holders (resolving the ms it took) and notes,
 * per shard, when the latest poll was sent that still read the epoch `before` has: PostgreSQL read the row at or
 * after that time, and an epoch only ever grows, so the shard did not change hands between `before` and then.
 */
async function watchEpochs(
  db: pg.Client,
  before: readonly ShardLease[],
  done: (holders: Map<string, number[]>) => boolean,
  timeoutMs: number,
): Promise<{ ms: number; unchangedUntil: Map<number, number> }> {
  const t0 = Date.now();
  const epochOf = new Map(before.map((l) => [l.shard, l.epoch]));
  const unchangedUntil = new Map<number, number>();
  for (;;) {
    const sentMs = Date.now();
    const leases = await shardLeases(db);
    for (const l of leases) if (l.epoch === epochOf.get(l.shard)) unchangedUntil.set(l.shard, sentMs);
    if (done(holdersOf(leases))) return { ms: Date.now() - t0, unchangedUntil };
    assert.ok(Date.now() - t0 < timeoutMs, `shards not as expected within ${timeoutMs} ms`);
    await sleep(100);
  }
}

interface Received {
  kind: string;
  status: string;
  previousStatus?: string;
  message?: string;
  /** The delivery's Idempotency-Key: the same on every send of one queued alert (decision 157). */
  id?: string;
}

/**
 * The alerts the receiver got, per monitor name, in arrival order, one per delivery id: delivery is at least once
 * (docs/alerting.md "At least once"), so a send whose outcome a kill -9 lost is sent again with the same
 * Idempotency-Key, which a receiver that deduplicates takes as one alert. `resent` counts those repeats.
 */
function alertsOf(rx: WebhookReceiver): { per: Map<string, Received[]>; resent: number } {
  const per = new Map<string, Received[]>();
  const seen = new Set<string>();
  let resent = 0;
  for (const r of rx.requests) {
    const id = r.headers['idempotency-key'] as string | undefined;
    if (id !== undefined && seen.has(id)) {
      resent++;
      continue;
    }
    if (id !== undefined) seen.add(id);
    const b = r.body ?? {};
    const name = b.monitor?.name as string;
    const a: Received = { kind: b.kind, status: b.status, previousStatus: b.previousStatus, message: b.message, id };
    per.set(name, [...(per.get(name) ?? []), a]);
  }
  return { per, resent };
}

/** Problem alerts the receiver got, per monitor name (one per delivery id). */
function problemAlerts(rx: WebhookReceiver): Map<string, number> {
  const per = new Map<string, number>();
  for (const [name, list] of alertsOf(rx).per) {
    const n = list.filter((a) => a.kind === 'problem').length;
    if (n > 0) per.set(name, n);
  }
  return per;
}

/**
 * The monitors sent one transition twice: a problem alert announcing the status the alert before it (of that monitor)
 * already announced as a problem, with no recovery between. A second problem alert for a new status (a failing
 * monitor whose answer became a timeout on a loaded machine, say) is a transition of its own, not a duplicate.
 */
function repeatedTransitions(rx: WebhookReceiver): Array<[string, Received[]]> {
  return [...alertsOf(rx).per].filter(([, list]) =>
    list.some(
      (a, i) => i > 0 && a.kind === 'problem' && list[i - 1]!.kind === 'problem' && list[i - 1]!.status === a.status,
    ),
  );
}

describe('issue 16 proof: three compiled monitor services on one PostgreSQL database', async () => {
  const made = await createTestDatabase('cluster_proof');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db: TestDatabase = made;
  const sql = new pg.Client({ connectionString: db.url });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-proof-'));
  const members: Member[] = [];
  const hits: Arrivals = {};
  const runs: Runs = {};
  let target: RecordingTarget;
  let rx: WebhookReceiver;
  let env: Record<string, string>;

  /** Moves what the target recorded since the last call into `hits` (arrival times) and `runs` (in full). */
  const collect = async () => {
    for (const [k, v] of Object.entries(await target.runs())) {
      (hits[k] ??= []).push(...v.map((a) => a.atMs));
      (runs[k] ??= []).push(...v);
    }
  };
  const start = async (dataDir?: string): Promise<Member> => {
    const proc = await startServiceProcess({ args: [path.join(ROOT, 'dist/monitor/main.js')], env, dataDir });
    const api = new HttpsClient(proc.url, certsFrom(path.join(proc.dataDir, 'certs')));
    await api.login('admin', ADMIN_PASSWORD);
    return { proc, api };
  };
  /** The final spread: 3 holders, each shard with the member rendezvous hashing gives it. */
  const converged = (h: Map<string, number[]>) => {
    if (!spreadOver(3)(h)) return false;
    const ids = [...h.keys()].map((id) => ({ id, probe: 'eu-1' }));
    return [...h].every(([id, shards]) => shards.every((s) => rendezvousOwner('*', s, ids) === id));
  };

  before(async () => {
    const buildStartMs = Date.now();
    ensureBuilt();
    const buildMs = Date.now() - buildStartMs;
    await sql.connect();
    target = await startRecordingTarget();
    const tls = makeTestTls();
    rx = await startWebhookReceiver(tls, { status: 200, body: 'ok' });
    fs.writeFileSync(path.join(tmp, 'receiver-ca.pem'), tls.cert);
    const store = { driver: 'postgres' as const, url: db.url, namespace: 'monitor' };
    const url = (prefix: string) => (j: number) => target.urlFor(seededName(prefix, j));
    const extra = { notifyStatus: 'on' };
    await seedUrlMonitors(store, N, { prefix: 'p', url: url('p'), timeout: '10', probe: 'default', extra });
    await seedUrlMonitors(store, US_NAMES.length, { prefix: 'us', url: url('us'), timeout: '10', probe: 'us-1' });
    env = {
      STORE_URL: db.url,
      PROBE: 'eu-1',
      ADMIN_PASSWORD,
      NODE_EXTRA_CA_CERTS: path.join(tmp, 'receiver-ca.pem'),
    };
    const t0 = Date.now();
    members.push(await start());
    const firstMs = Date.now() - t0;
    members.push(...(await Promise.all([1, 2].map(() => start(sharedDataDir(members[0]!.proc.dataDir))))));
    const allMs = Date.now() - t0;
    const hook = await members[0]!.api.request('POST', '/alerting/channels/webhook', {
      body: { enabled: 'true', url: `${rx.url}/hook` },
    });
    assert.equal(hook.status, 200, hook.text);
    for (const m of members) {
      for (let i = 0; (await m.api.request('GET', '/alerting/channels')).body.webhook?.enabled !== 'true'; i++) {
        assert.ok(i < 300, 'the webhook channel reached every instance');
        await sleep(100);
      }
    }
    const convergedMs = await waitForHolders(sql, converged, 120_000);
    console.log(
      `set-up: build ${buildMs} ms; first instance listening after ${firstMs} ms, all three after ${allMs} ms; ` +
        `shards spread ${convergedMs} ms later`,
    );
  });

  after(async () => {
    for (const m of members) {
      m.api.close();
      m.proc.child.kill('SIGKILL');
    }
    target?.close();
    await rx?.close();
    await sql.end().catch(() => undefined);
    await db.drop();
    for (const m of members) fs.rmSync(m.proc.dataDir, { recursive: true, force: true });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('3 instances, 3,000 url monitors at 1MIN: each runs exactly once a minute over 3 minutes', async () => {
    await target.fail(FAILING);
    await collect();
    const holders = await leaseHolders(sql);
    const t0 = Date.now();
    while (Date.now() - t0 < 3 * MIN_MS) {
      await sleep(Math.min(10_000, t0 + 3 * MIN_MS - Date.now()));
      await collect();
    }
    const t1 = Date.now();
    const s = runStats(hits, NAMES, t0, t1);
    console.log(`proof 1: ${s.total} runs of ${N} monitors in ${t1 - t0} ms: ${s.missed} missed, ${s.duplicates} dup`);
    assert.equal(s.missed, 0, `missed runs, e.g. ${s.examples.join(', ')}`);
    assert.equal(s.duplicates, 0, `duplicate runs, e.g. ${s.examples.join(', ')}`);
    assert.deepEqual(await leaseHolders(sql), holders, 'no shard changed hands meanwhile');
  });

  it('kill -9 of one instance: its monitors run again within one interval, at most one duplicate each; restarted, it owns a share within 30 s', async () => {
    const victim = members[2]!;
    const theirs = await monitorsOf(sql, victim);
    assert.ok(theirs.length > 500, `the victim runs a third of the monitors (${theirs.length})`);
    await collect();
    const killMs = Date.now();
    victim.proc.child.kill('SIGKILL');
    victim.api.close();
    const takeoverMs = await waitForHolders(sql, spreadOver(2), 120_000);
    let waiting = theirs;
    while (waiting.length > 0) {
      assert.ok(Date.now() - killMs < 3 * MIN_MS, `${waiting.length} monitors not run since the kill`);
      await sleep(2000);
      await collect();
      waiting = waiting.filter((n) => !(hits[n] ?? []).some((t) => t > killMs));
    }
    const doneMs = Date.now();
    const firstAfter = theirs.map((n) => Math.min(...hits[n]!.filter((t) => t > killMs)) - killMs);
    const rerunMs = Math.max(...firstAfter);
    const dupsOf = (n: string) => {
      const t = hits[n]!.filter((x) => x > killMs - MIN_MS).sort((a, b) => a - b);
      return t.filter((x, i) => i > 0 && x - t[i - 1]! < MIN_MS / 2).length;
    };
    const dups = theirs.map(dupsOf);
    const others = runStats(
      hits,
      NAMES.filter((n) => !theirs.includes(n)),
      killMs - MIN_MS,
      doneMs,
    );
    console.log(
      `proof 2: ${theirs.length} monitors of the killed instance; its leases taken over ${takeoverMs} ms after the ` +
        `kill; all ran again within ${rerunMs} ms; ${dups.filter((d) => d > 0).length} ran twice for one due time ` +
        `(max ${Math.max(...dups)} per monitor); other monitors ${others.missed} missed, ${others.duplicates} dup`,
    );
    // A run later than 1.5 intervals after the kill would be a missed due time (the missed-run rule of proof 1).
    assert.ok(rerunMs < 1.5 * MIN_MS, `a monitor ran again only ${rerunMs} ms after the kill`);
    assert.ok(Math.max(...dups) <= 1, 'at most one duplicate per monitor during the handover');
    assert.equal(others.missed + others.duplicates, 0, `the survivors' own monitors: ${others.examples.join(', ')}`);

    const back = await start(victim.proc.dataDir);
    members[2] = back;
    const rejoinMs = await waitForHolders(sql, (h) => converged(h) && [...h.keys()].some(back.proc.isMember), 30_000);
    console.log(
      `proof 2: the restarted instance owns ${(await monitorsOf(sql, back)).length} monitors ${rejoinMs} ms after it listened`,
    );
  });

  /**
   * The monitors the process `pid` ran stale after SIGCONT: a run on a connection the target accepted at or after
   * `contMs` (so the run started after SIGCONT: the process was stopped while idle, when every run it had started
   * had called connect(), and a check opens one fresh connection per run: no keep-alive, no retries), arriving
   * before the last poll that still read its shard's epoch from before SIGCONT (so the run started while another
   * member held the shard). Its runs of shards it won back under new epochs are not counted, nor runs it had in
   * flight across the pause.
   * Why this can still fail: a run it starts for a lost shard right after SIGCONT (its fence not refusing it) comes
   * on a new connection within milliseconds, while winning a shard back takes seconds (its first heartbeat after
   * SIGCONT rejoins, the successor releases on its own next heartbeat, the paused one takes over on its next, 5 s
   * after its first); the epochs are read every ~100 ms until then, so such a run lies inside its shard's window.
   * With the start-of-run fence check in engine.ts's fencedRun removed, this test fails here (tried: 60+ monitors).
   */
  const staleRuns = (pid: number, contMs: number, unchangedUntil: Map<number, number>): string[] =>
    NAMES.filter((n) => {
      const until = unchangedUntil.get(shardOf(n)) ?? 0;
      return (runs[n] ?? []).some((a) => a.pid === pid && a.connectedMs >= contMs && a.atMs < until);
    });

  /**
   * Checks the attribution itself: every request since `fromMs` names its sender, and the runs held across the
   * pause were sent by the paused process `pid`. Resolves how many requests `pid` sent on connections opened since
   * `contMs`.
   */
  const checkAttribution = (pid: number, fromMs: number, contMs: number, held: readonly string[]): number => {
    const since = Object.entries(runs).flatMap(([name, l]) =>
      l.filter((a) => a.atMs >= fromMs).map((a) => ({ name, ...a })),
    );
    const unattributed = since.filter((a) => a.pid === undefined);
    assert.deepEqual(unattributed.slice(0, 10), [], `${unattributed.length} requests not attributed to a member`);
    const notPaused = held.filter((n) => !runs[n]!.some((a) => a.pid === pid && a.atMs < contMs));
    assert.deepEqual(notPaused, [], 'held runs not attributed to the paused instance');
    return since.filter((a) => a.pid === pid && a.connectedMs >= contMs).length;
  };

  it('SIGSTOP past the lease, then SIGCONT: no result, no alert and no run for the shards it lost', async () => {
    const paused = members[1]!;
    const theirs = await monitorsOf(sql, paused);
    const healthy = theirs.filter((n) => !FAILING.includes(n));
    await target.attribute(members.map((m) => m.proc.pid));
    const attributedFromMs = Date.now();
    // Its next runs of healthy monitors stay in flight across the pause; they are answered 500 while it is stopped.
    await target.hold(healthy);
    for (let i = 0; (await target.held()) < 10; i++) {
      assert.ok(i < 1200, 'runs of the paused instance reached the target');
      await sleep(100);
    }
    await collect();
    const stopMs = Date.now();
    const stopAttempts = await stopWhileIdle(paused.proc.pid);
    const held = await target.release(500);
    const lostMs = await waitForHolders(
      sql,
      (h) => spreadOver(2)(h) && ![...h.keys()].some(paused.proc.isMember),
      120_000,
    );
    // Every shard's epoch while it holds none: a shard still at this epoch later has not changed hands since.
    const lostEpochs = await shardLeases(sql);
    assert.deepEqual(
      lostEpochs.filter((l) => paused.proc.isMember(l.owner)),
      [],
      'the paused instance holds no shard',
    );
    const contMs = Date.now();
    paused.proc.child.kill('SIGCONT');
    // It rejoins (the same member, its shards come back under new epochs): by then the answers were read.
    const { ms: backMs, unchangedUntil } = await watchEpochs(sql, lostEpochs, converged, 60_000);
    await collect();
    for (const m of members) {
      for (const name of held) {
        const d = await m.api.request('POST', '/getMonitorDetails', { body: { type: 'url', name, sched: '1MIN' } });
        assert.equal(d.status, 200, d.text);
        const bad = (d.body.recent as Array<{ status: string; ts: number }>).filter((r) => r.status !== 'OK');
        assert.deepEqual(bad, [], `${name}: a result of a run in flight during the pause was written`);
      }
    }
    const alerted = held.filter((n) => problemAlerts(rx).has(n));
    assert.deepEqual(alerted, [], 'alerts for runs in flight during the pause');
    const rerun = checkAttribution(paused.proc.pid, attributedFromMs, contMs, held);
    const stale = staleRuns(paused.proc.pid, contMs, unchangedUntil);
    assert.deepEqual(stale, [], 'the paused instance ran monitors of shards it did not hold after SIGCONT');
    let fenced = 0;
    for (let i = 0; fenced < held.length; i++) {
      assert.ok(i < 600, `the paused instance counted ${fenced} refused results, ${held.length} were in flight`);
      if (i > 0) await sleep(100);
      const view = (await paused.api.request('GET', '/cluster')).body as {
        members: Array<{ self: boolean; fencedWrites: number }>;
      };
      fenced = view.members.find((m) => m.self)?.fencedWrites ?? 0;
    }
    console.log(
      `proof 3: paused ${contMs - stopMs} ms (stopped idle at attempt ${stopAttempts}; its shards taken over after ` +
        `${lostMs} ms, back ${backMs} ms after SIGCONT); ${held.length} runs in flight answered 500 while stopped; ` +
        `fencedWrites ${fenced}; ${rerun} runs by it since SIGCONT, ${stale.length} of shards it did not hold`,
    );
  });

  it('no alert is sent twice: each transition alerted once, across the kill, the restart and the pause', async () => {
    for (let i = 0; FAILING.some((n) => !problemAlerts(rx).has(n)); i++) {
      assert.ok(i < 600, `no alert for ${FAILING.filter((n) => !problemAlerts(rx).has(n)).join(', ')}`);
      await sleep(100);
    }
    const all = alertsOf(rx);
    const keyless = rx.requests.filter((r) => r.headers['idempotency-key'] === undefined).length;
    assert.equal(keyless, 0, 'every queued alert carries its delivery id');
    const changed = [...all.per].filter(([, l]) => l.filter((a) => a.kind === 'problem').length > 1).length;
    const twice = repeatedTransitions(rx);
    console.log(
      `alerts: ${problemAlerts(rx).size} monitors alerted, ${changed} of them for more than one status, ` +
        `${twice.length} with a transition sent twice; ${all.resent} resends of a delivery id`,
    );
    // Healthy monitors alert only when the machine was too loaded to answer in time: say what they reported.
    const others = new Map<string, number>();
    for (const [name, l] of all.per)
      for (const a of l)
        if (a.kind === 'problem' && !FAILING.includes(name)) {
          const why = `${a.status}: ${(a.message ?? '').slice(0, 80)}`;
          others.set(why, (others.get(why) ?? 0) + 1);
        }
    if (others.size > 0) console.log(`alerts of healthy monitors: ${JSON.stringify([...others].slice(0, 5))}`);
    assert.deepEqual(twice, [], 'a transition alerted more than once');
  });

  it('probe affinity: the us-1 monitors never ran on the eu-1 instances and are reported unassigned', async () => {
    await collect();
    assert.deepEqual(
      US_NAMES.filter((n) => hits[n]),
      [],
      'us-1 monitors ran',
    );
    for (const m of members) {
      const cl = (await m.api.request('GET', '/cluster')).body;
      assert.equal(cl.unassigned.monitors, US_NAMES.length, JSON.stringify(cl.unassigned));
      assert.deepEqual(
        cl.unassigned.probes.map((p: { probe: string; monitors: number }) => [p.probe, p.monitors]),
        [['us-1', US_NAMES.length]],
      );
      const list = (await m.api.request('GET', '/monitors')).body as Array<{ name: string; unassigned?: boolean }>;
      assert.deepEqual(
        list
          .filter((x) => x.unassigned)
          .map((x) => x.name)
          .sort(),
        [...US_NAMES].sort(),
      );
    }
  });
});
