/**
 * What the discovery routes call (agent/http/discovery.routes.ts): one method per endpoint, as MonitorsApi is for the
 * monitor routes. It runs a cycle, looks a port's owner up (cmdline redacted below admin), computes the automatic
 * baselines under the store mutex, samples the current system metrics and reads the graphs behind the swap gate.
 */
import { AppError } from '../../core/errors.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import { readLoad } from '../../core/system/load.js';
import { readMemory } from '../../core/system/memory.js';
import { readUptime } from '../../core/system/uptime.js';
import type { CpuSampler } from '../../core/system/cpu.js';
import type { SwapGate } from '../swap-gate.js';
import type { Discovery } from './cycle.js';
import type { Mutex } from './lock.js';
import { parsePortParam, type PortOwner } from './process-by-port.js';
import { redactCommandLine } from './redact-cmdline.js';
import { graph, SYSTEM_GRAPH_KEYS } from './series.js';
import type { StatusBook } from './status.js';
import { computeAllBaselines, MIN_BASELINE_SAMPLES } from './thresholds.js';

export interface DiscoveryApiDeps {
  discovery: Discovery;
  lookup: (port: number) => PortOwner;
  store: KvStore;
  status: StatusBook;
  mutex: Mutex;
  /** Graph reads wait while /reinitDatabase drops the buckets they read. */
  gate: SwapGate;
  cpu: CpuSampler;
  now?: () => number;
}

/** The graph kinds of /process/reportGraph. */
export const GRAPH_TYPES = ['process', 'system', 'port', 'disk', 'metric'] as const;

/** The series keys one graph request reads. */
function graphKeys(type: string, key: string): string[] {
  switch (type) {
    case 'process':
      return [`${key}_cpu`, `${key}_mem`, `${key}_count`];
    case 'system':
      return [key.startsWith('system_') ? key : `system_${key}`];
    case 'port':
      return [`port_${key}`, `port_${key}_listening`];
    case 'disk':
      return [key.startsWith('disk_') ? key : `disk_${key}`];
    case 'metric':
      return [key];
    default:
      throw AppError.badRequest('type must be process, system, port, disk or metric', 'params.type');
  }
}

/** A graph range from the path (Unix ms strings, digits only per the route schema). */
function range(p: { startTime: string; endTime: string }): [number, number] {
  const s = Number(p.startTime);
  const e = Number(p.endTime);
  if (e < s) throw AppError.badRequest('endTime must be ≥ startTime', 'params.endTime');
  return [s, e];
}

export class DiscoveryApi {
  private readonly now: () => number;

  constructor(private readonly deps: DiscoveryApiDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** A discovery cycle now (a call during a running cycle joins it), summarised. */
  async run() {
    const r = await this.deps.discovery.run();
    return {
      code: 200,
      startedMs: r.startedMs,
      durationMs: r.durationMs,
      collectors: r.collectors,
      processes: r.processes?.length ?? 0,
      listeners: r.sockets?.listeners.length ?? 0,
      watchedProcesses: r.watchedProcesses,
      watchedPorts: r.watchedPorts,
      changes: r.changes,
      statuses: r.statuses,
    };
  }

  /** The process listening on `port` (400 outside 1–65535, 404 when nothing listens); cmdline redacted below admin. */
  processByPort(port: string, admin: boolean): PortOwner {
    const owner = this.deps.lookup(parsePortParam(port));
    if (admin || owner.cmdline === undefined) return owner;
    return { ...owner, cmdline: redactCommandLine(owner.cmdline) };
  }

  /** Recomputes every automatic baseline. */
  async computeThresholds() {
    // Under the store mutex: a cycle's status evaluation sees all the old baselines or all the new, and a reinit
    // never interleaves with the THRESHOLDS writes.
    const r = await this.deps.mutex.run(async () => {
      const out = await computeAllBaselines(this.deps.store, { nowMs: this.now() });
      await this.deps.status.reloadBaselines();
      return out;
    });
    const n = Object.keys(r.computed).length;
    const short = Object.keys(r.skipped).length;
    const message =
      `computed ${n} baseline${n === 1 ? '' : 's'}` +
      (short
        ? `; could not compute ${short} (fewer than ${MIN_BASELINE_SAMPLES} samples in the window: see skipped)`
        : '');
    return { code: 200, message, minSamples: MIN_BASELINE_SAMPLES, computed: r.computed, skipped: r.skipped };
  }

  /** CPU since the previous sample (a fresh ≥ 200 ms window when the last is under 1 s old), memory, load, uptime. */
  async metricsNow() {
    const last = this.deps.cpu.lastSampleMs;
    if (last === undefined || this.now() - last < 1000) {
      this.deps.cpu.sample();
      await new Promise((r) => setTimeout(r, 200));
    }
    const cpu = this.deps.cpu.sample();
    return {
      timeMs: this.now(),
      cpu: { totalPct: cpu.totalPct, perCorePct: cpu.perCorePct, cores: cpu.cores },
      memory: readMemory(),
      load: readLoad(),
      uptime: readUptime(),
    };
  }

  /** The system series over a range, downsampled. */
  async systemGraph(p: { startTime: string; endTime: string }) {
    const [s, e] = range(p);
    const series = await this.deps.gate.read(() => graph(this.deps.store, SYSTEM_GRAPH_KEYS, s, e));
    return { startTime: s, endTime: e, series };
  }

  /** One metric (by graph type and key) over a range, downsampled. */
  async metricGraph(p: { type: string; key: string; startTime: string; endTime: string }) {
    const [s, e] = range(p);
    const keys = graphKeys(p.type, p.key);
    const series = await this.deps.gate.read(() => graph(this.deps.store, keys, s, e));
    return { type: p.type, key: p.key, startTime: s, endTime: e, series };
  }
}
