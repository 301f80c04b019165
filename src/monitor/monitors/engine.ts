/**
 * Connects the monitor definitions to the scheduler and the runner: every monitor is in the scheduler (state off =
 * disabled), definition and settings changes apply live (concurrencyLimit; timezone re-reads every schedCron), and
 * types with their own concurrency cap (browser) get a gate class of their own. Schedule info carries the next run as
 * Unix ms and as ISO local time in the `timezone` setting. In a cluster (docs/cluster.md) the engine schedules only the
 * monitors whose shard this member holds, re-syncing when the held set changes; a scheduled run starts only while the
 * lease holds and carries it as its fence. A monitor of a shard held elsewhere has no scheduler entry here (decision
 * 184): its schedule info is described from its definition, and a run now of it makes an entry for that run only.
 * Without a cluster (LMDB, one process) nothing of this is on the run path.
 */
import type { Logger } from 'pino';
import type { SettingsService } from '../../core/settings/settings.service.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import { createScheduler, type Scheduler, type MonitorScheduleInfo, type RunObserver } from '../scheduler/scheduler.js';
import { parseSchedule } from '../scheduler/schedule.js';
import type { Clock } from '../scheduler/clock.js';
import { isoInZone } from '../scheduler/zoned-time.js';
import type { MonitorsService } from './monitors.service.js';
import type { StoredMonitor } from './monitors.repo.js';
import type { RunResult, RunService } from './run.service.js';
import type { Assignment, Ownership, WonLease } from '../cluster/coordinator.js';
import type { LeaseKey } from '../cluster/cluster-store.js';
import type { ShardIndex } from './shard-index.js';
import { createSystemClock } from '../scheduler/clock.js';
import type { RunContext } from '../scheduler/scheduler.js';
import { AppError } from '../../core/errors.js';

/** The scheduler's dispatch window (its default) and the most a cluster member widens it to. */
const BATCH_MS = 100;
const MAX_CLUSTER_BATCH_MS = 400;

export type EngineScheduleInfo = MonitorScheduleInfo & {
  /** nextDueMs as ISO 8601 local time with its offset in the `timezone` setting (null when there is none). */
  nextDueIso: string | null;
  /** The `timezone` setting the ISO time is written in (the cron's own zone is `timezone` too for schedCron). */
  displayTimezone: string;
  /** In a cluster: the monitor's shard, who runs it, and whether it is unassigned (no live member of its probe). */
  assignment?: Assignment;
};

export interface Engine {
  scheduler: Scheduler<RunResult>;
  runNow(name: string): Promise<RunResult>;
  scheduleInfo(name: string): EngineScheduleInfo | undefined;
  nextDueMs(name: string): number | null | undefined;
  /** In a cluster: true when no live member may run the monitor (its probe has no live instance). */
  unassigned(name: string): boolean;
  start(): void;
  stop(): Promise<void>;
}

export function createEngine(deps: {
  monitors: MonitorsService;
  runner: RunService;
  types: ReadonlyMap<DbName, MonitorType>;
  settings: SettingsService;
  log: Logger;
  clock?: Clock;
  /** Sees every run start and end (benchmarks, tests). */
  observer?: RunObserver;
  /** The cluster's shard ownership; absent in single-process mode (every monitor runs here). */
  ownership?: Ownership;
  /**
   * When the monitor's latest known run started, here or on another member (last results): a shard taken over does
   * not catch up an occurrence that already ran.
   */
  lastRunMs?: (name: string) => number | undefined;
}): Engine {
  const { monitors, runner, settings, log, ownership } = deps;
  const clock = deps.clock ?? createSystemClock();
  const classCaps: Record<string, number> = {};
  for (const [id, t] of deps.types) if (t.maxConcurrent) classCaps[id] = t.maxConcurrent;
  const fencedRun = (own: Ownership) => (id: string, _dueMs: number, ctx: RunContext) => {
    const m = monitors.get(id);
    if (ctx.trigger === 'manual') return runner.run(m);
    const lease = own.leaseFor(id, m.config.probe);
    if (!lease || !own.holds(lease)) {
      own.noteFenced();
      return Promise.reject(new AppError('CONFLICT', 'shard no longer held by this member: run skipped'));
    }
    const holds = (): boolean => {
      if (own.holds(lease)) return true;
      own.noteFenced();
      return false;
    };
    return runner.run(m, { holds, epoch: lease.epoch });
  };
  const scheduler = createScheduler<RunResult>({
    run: ownership ? fencedRun(ownership) : (id) => runner.run(monitors.get(id)),
    concurrencyLimit: Number(settings.get('concurrencyLimit')),
    classCaps,
    log,
    clock,
    observer: deps.observer,
  });
  const timezone = (): string => settings.get('timezone') || 'UTC';
  // The timezone applies to explicit crons; presets are intervals aligned on UTC (docs/scheduling.md).
  const specOf = (m: StoredMonitor) => {
    const cron = m.config.schedCron || undefined;
    return parseSchedule(m.config.sched!, cron, cron ? { timezone: timezone() } : {});
  };
  /** specOf, or undefined for a schedule that cannot be parsed (such a monitor is not scheduled: syncOne logs it). */
  const usableSpec = (m: StoredMonitor) => {
    try {
      return specOf(m);
    } catch {
      return undefined;
    }
  };
  const classOf = (m: StoredMonitor) => (classCaps[m.type] ? m.type : undefined);
  const heldHere = (m: StoredMonitor) => !ownership || ownership.leaseFor(m.name, m.config.probe) !== undefined;
  const sync = (name: string, m: StoredMonitor | undefined) => {
    if (!m) {
      scheduler.remove(name);
      return;
    }
    const held = heldHere(m);
    // Held elsewhere and no run of it here: nothing to keep, nothing to parse (decision 184).
    if (!held && !scheduler.has(name)) return;
    scheduler.upsert(name, specOf(m), {
      enabled: m.config.state === 'on' && held,
      weightClass: classOf(m),
      transient: !held,
    });
  };
  /**
   * A member's dispatch window: 100 ms × (monitors it may run ÷ monitors it holds), at most 400 ms, so it wakes for
   * as many checks at a time as one process running them all would (bench:cluster: at one third of the load, 100 ms
   * gave 1,248–1,360 checks per CPU-second and 300 ms 1,554–2,015; docs/scale.md). Lateness grows with it.
   */
  const clusterBatchMs = (own: Ownership, idx: ShardIndex): number => {
    let mine = 0;
    let held = 0;
    for (const e of idx.entries()) {
      // serves() reads a probe's group; a group is its own probe (shards.ts groupOf).
      if (e.enabled === 0 || own.serves?.(e.group) === false) continue;
      mine += e.enabled;
      if (own.leaseAt(e.group, e.shard) !== undefined) held += e.enabled;
    }
    return held === 0 ? BATCH_MS : Math.min(MAX_CLUSTER_BATCH_MS, Math.round((BATCH_MS * mine) / held));
  };
  const syncOne = (m: StoredMonitor) => {
    try {
      sync(m.name, m);
    } catch (e) {
      log.error({ err: e, monitor: m.name }, 'monitor has an unusable schedule; not scheduled');
    }
  };
  const syncAll = (onlyCron: boolean) => {
    for (const m of monitors.repo.all()) if (!onlyCron || m.config.schedCron) syncOne(m);
  };
  syncAll(false);
  monitors.onChange(sync);
  /** The monitors of shards that changed hands here: scheduled (won) or not (dropped) from now on. */
  const syncShards = (idx: ShardIndex, changed: readonly LeaseKey[]) => {
    for (const k of changed) {
      for (const name of idx.names(k.group, k.shard)) {
        // The index and the map change together (monitors.repo.ts): an indexed name is always in the map.
        const m = monitors.repo.get(name);
        if (m) syncOne(m);
      }
    }
  };
  /** Shards just taken over: run each monitor's occurrence that fell due in the gap (at most one per monitor). */
  const catchUp = (idx: ShardIndex, won: readonly WonLease[]) => {
    const nowMs = clock.now();
    for (const w of won) {
      if (w.missedForMs <= 0) continue;
      for (const name of idx.names(w.group, w.shard)) {
        // The first occurrence due after the gap began, unless a run started since (the scheduler's entry of a
        // dropped shard is gone, and with it this member's last due time: decision 184).
        scheduler.catchUp(name, Math.max(nowMs - w.missedForMs, deps.lastRunMs?.(name) ?? -Infinity));
      }
    }
  };
  if (ownership) {
    // The monitors by lease key: an ownership change touches only the shards that changed hands.
    const index = monitors.repo.shardIndex();
    ownership.onChange((won, changed) => {
      syncShards(index, changed);
      scheduler.setBatchMs(clusterBatchMs(ownership, index));
      catchUp(index, won);
    });
  }
  settings.onChange((changed) => {
    if (changed.includes('concurrencyLimit')) scheduler.setConcurrency(Number(settings.get('concurrencyLimit')));
    if (changed.includes('timezone')) syncAll(true);
  });
  return {
    scheduler,
    runNow: (name) => {
      const m = monitors.get(name);
      if (scheduler.has(name)) return scheduler.runNow(name);
      // Held elsewhere (or an unusable schedule): an entry for this run, dropped when it ends (sync: transient).
      const spec = usableSpec(m);
      if (spec === undefined) return scheduler.runNow(name); // not scheduled: refused as before
      scheduler.upsert(name, spec, { enabled: false, weightClass: classOf(m) });
      const run = scheduler.runNow(name);
      syncOne(m);
      return run;
    },
    scheduleInfo: (name) => {
      const m = ownership ? monitors.repo.get(name) : undefined;
      // A monitor with no entry here (held elsewhere) is described from its definition (decision 184).
      const spec = m && !scheduler.has(name) ? usableSpec(m) : undefined;
      const info = spec ? scheduler.describe(name, spec) : scheduler.info(name);
      if (info === undefined) return undefined;
      const tz = timezone();
      const nextDueIso = info.nextDueMs === null ? null : isoInZone(info.nextDueMs, tz);
      if (!ownership) return { ...info, nextDueIso, displayTimezone: tz };
      const assignment = ownership.assignment(name, m?.config.probe);
      return { ...info, enabled: m?.config.state === 'on', nextDueIso, displayTimezone: tz, assignment };
    },
    nextDueMs: (name) => scheduler.nextDueMs(name),
    unassigned: (name) => {
      if (!ownership) return false;
      const m = monitors.repo.get(name);
      return m !== undefined && ownership.assignment(name, m.config.probe).unassigned;
    },
    start: () => scheduler.start(),
    stop: () => scheduler.stop(),
  };
}
