/**
 * One discovery cycle: run every collector (each timed; a failing collector is recorded and the cycle goes on),
 * derive the watched processes/ports and metric observations, store the series and statuses (under the store mutex,
 * so /reinitDatabase never interleaves), write `<DATA_DIR>/discover_metrics.json` atomically (temp file + rename),
 * then email status changes. A run requested while one is in flight joins it (same promise, same result).
 */
import { randomBytes } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { KvStore } from '../../core/storage/kv-store.js';
import type { Listener } from '../../core/system/sockets.js';
import { csv, parsePort, type AgentSettings } from '../settings.js';
import type { AlertSender } from './alerts.js';
import type { CollectorId, CollectorOutputs, Collectors } from './collectors/registry.js';
import type { Mutex } from './lock.js';
import { pruneSeries, seriesOps } from './series.js';
import type { StatusBook, StatusChange } from './status.js';
import { observe, seriesPoints, watchPorts, watchProcesses, type WatchedPort, type WatchedProcess } from './watch.js';

export interface CollectorRun {
  ok: boolean;
  durationMs: number;
  error?: string;
}

export interface CycleResult extends CollectorOutputs {
  startedMs: number;
  durationMs: number;
  collectors: Record<string, CollectorRun>;
  watchedProcesses: WatchedProcess[];
  watchedPorts: WatchedPort[];
  changes: StatusChange[];
  statuses: Record<string, string>;
}

export interface DiscoveryDeps {
  collectors: Collectors;
  store: KvStore;
  settings: AgentSettings;
  status: StatusBook;
  mutex: Mutex;
  metricsFile: string;
  log: Logger;
  alerts?: AlertSender;
  now?: () => number;
}

export interface Discovery {
  /** Runs a cycle, or joins the one in flight. */
  run(): Promise<CycleResult>;
  last(): CycleResult | undefined;
  readonly running: boolean;
}

export async function writeFileAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { mode: 0o600 });
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

async function runCollectors(
  collectors: Collectors,
  now: () => number,
): Promise<{ out: CollectorOutputs; runs: Record<string, CollectorRun> }> {
  const out: Record<string, unknown> = {};
  const runs: Record<string, CollectorRun> = {};
  for (const [id, c] of Object.entries(collectors) as Array<[CollectorId, Collectors[CollectorId]]>) {
    const t0 = performance.now();
    try {
      out[id] = await c.collect({ now });
      runs[id] = { ok: true, durationMs: Math.round((performance.now() - t0) * 100) / 100 };
    } catch (e) {
      runs[id] = {
        ok: false,
        durationMs: Math.round((performance.now() - t0) * 100) / 100,
        error: (e as Error).message,
      };
    }
  }
  return { out, runs };
}

export function createDiscovery(deps: DiscoveryDeps): Discovery {
  const now = deps.now ?? Date.now;
  let inFlight: Promise<CycleResult> | undefined;
  let last: CycleResult | undefined;
  let lastPruneMs = 0;

  const cycle = async (): Promise<CycleResult> => {
    const startedMs = now();
    const t0 = performance.now();
    const settings = deps.settings.get();
    const { out, runs } = await runCollectors(deps.collectors, now);
    for (const [id, r] of Object.entries(runs))
      if (!r.ok) deps.log.warn({ collector: id, err: r.error }, 'collector failed');
    const procs = watchProcesses(
      csv(settings.processes ?? ''),
      out.processes ?? [],
      out.system?.memory.totalBytes ?? 0,
    );
    const ports = csv(settings.ports ?? '')
      .map((p) => parsePort(p)!)
      .filter((p) => p !== undefined);
    const listeners: Listener[] = out.sockets?.listeners ?? [];
    const watchedPorts = watchPorts(ports, listeners, out.sockets?.established ?? {}, out.processes ?? []);
    const obs = observe(out, procs, watchedPorts);
    const changes = await deps.mutex.run(async () => {
      await deps.store.batch(seriesOps(seriesPoints(obs, procs, watchedPorts), startedMs));
      const ch = await deps.status.apply(obs, settings, startedMs);
      if (startedMs - lastPruneMs > 3_600_000) {
        lastPruneMs = startedMs;
        await pruneSeries(deps.store, startedMs);
      }
      return ch;
    });
    const result: CycleResult = {
      ...out,
      startedMs,
      durationMs: 0,
      collectors: runs,
      watchedProcesses: procs,
      watchedPorts,
      changes,
      statuses: Object.fromEntries(deps.status.all().map((s) => [s.key, s.status])),
    };
    result.durationMs = Math.round((performance.now() - t0) * 100) / 100;
    await writeFileAtomic(deps.metricsFile, JSON.stringify(result));
    last = result;
    if (changes.length && deps.alerts) {
      deps.alerts.send(changes).catch((e: Error) => deps.log.warn({ err: e.message }, 'alerts failed'));
    }
    deps.log.debug({ durationMs: result.durationMs, changes: changes.length }, 'discovery cycle done');
    return result;
  };

  return {
    run() {
      if (!inFlight) inFlight = cycle().finally(() => (inFlight = undefined));
      return inFlight;
    },
    last: () => last,
    get running() {
      return inFlight !== undefined;
    },
  };
}
