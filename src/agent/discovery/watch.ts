/**
 * Watched processes and ports (settings `processes`, `ports`) and the metric observations a cycle yields.
 * A watched name matches a process whose kernel name (comm) or argv[0] basename equals it.
 * Metric keys (also the STATUS bucket keys): system_cpu, system_mem, system_swap, system_load1/5/15, disk_<mount>,
 * <process>_cpu, <process>_mem, port_<n>. Series-only keys: <process>_count, port_<n>_listening.
 */
import type { ProcessInfo } from '../../core/system/processes.js';
import type { Listener } from '../../core/system/sockets.js';
import type { MetricGroup } from '../settings.js';
import { round2 } from '../../core/system/proc-read.js';
import type { CollectorOutputs } from './collectors/registry.js';

export interface WatchedProcess {
  name: string;
  count: number;
  cpuPct: number;
  rssBytes: number;
  memPct: number;
  pids: number[];
}

export interface WatchedPort {
  port: number;
  listening: boolean;
  pid: number | null;
  processName: string | null;
  established: number;
}

export interface Observation {
  key: string;
  group: MetricGroup;
  /** null when there is nothing to measure (the process is gone, the port closed). */
  value: number | null;
  /** A status decided regardless of thresholds, with the reason. */
  forced?: { status: 'CRITICAL'; reason: string };
}

function argv0Base(cmdline: string): string {
  const first = cmdline.split(' ', 1)[0] ?? '';
  return first.slice(first.lastIndexOf('/') + 1);
}

export function watchProcesses(names: string[], processes: ProcessInfo[], memTotalBytes: number): WatchedProcess[] {
  return names.map((name) => {
    const hits = processes.filter((p) => p.name === name || argv0Base(p.cmdline) === name);
    const rssBytes = hits.reduce((a, p) => a + p.rssBytes, 0);
    return {
      name,
      count: hits.length,
      cpuPct: round2(hits.reduce((a, p) => a + p.cpuPct, 0)),
      rssBytes,
      memPct: memTotalBytes > 0 ? round2((rssBytes * 100) / memTotalBytes) : 0,
      pids: hits.map((p) => p.pid),
    };
  });
}

export function watchPorts(
  ports: number[],
  listeners: Listener[],
  established: Record<string, number>,
  processes: ProcessInfo[],
): WatchedPort[] {
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  return ports.map((port) => {
    const l = listeners.find((x) => x.localPort === port && x.proto.startsWith('tcp'));
    const pid = l?.pid ?? null;
    return {
      port,
      listening: l !== undefined,
      pid,
      processName: pid === null ? null : (byPid.get(pid)?.name ?? null),
      established: established[String(port)] ?? 0,
    };
  });
}

export function observe(out: CollectorOutputs, procs: WatchedProcess[], ports: WatchedPort[]): Observation[] {
  const obs: Observation[] = [];
  if (out.system) {
    const s = out.system;
    obs.push({ key: 'system_cpu', group: 'CPU', value: s.cpu.totalPct });
    obs.push({ key: 'system_mem', group: 'MEM', value: s.memory.usedPct });
    if (s.memory.swapTotalBytes > 0) obs.push({ key: 'system_swap', group: 'SWAP', value: s.memory.swapUsedPct });
    obs.push({ key: 'system_load1', group: 'LOAD', value: s.load.load1 });
    obs.push({ key: 'system_load5', group: 'LOAD', value: s.load.load5 });
    obs.push({ key: 'system_load15', group: 'LOAD', value: s.load.load15 });
  }
  for (const d of out.disks?.usage ?? [])
    if (!d.error) obs.push({ key: `disk_${d.mountPoint}`, group: 'DISK', value: d.usedPct });
  if (out.processes) {
    for (const p of procs) {
      const forced =
        p.count === 0 ? { status: 'CRITICAL' as const, reason: `process ${p.name} is not running` } : undefined;
      obs.push({ key: `${p.name}_cpu`, group: 'PROC', value: p.count ? p.cpuPct : null, forced });
      obs.push({ key: `${p.name}_mem`, group: 'PROC', value: p.count ? p.memPct : null, forced });
    }
  }
  if (out.sockets) {
    for (const p of ports) {
      const forced = p.listening
        ? undefined
        : { status: 'CRITICAL' as const, reason: `nothing listens on TCP port ${p.port}` };
      obs.push({ key: `port_${p.port}`, group: 'PORT', value: p.listening ? p.established : null, forced });
    }
  }
  return obs;
}

/** Numbers stored as time series for one cycle: every observation with a value, plus counts and listening flags. */
export function seriesPoints(
  obs: Observation[],
  procs: WatchedProcess[],
  ports: WatchedPort[],
): Record<string, number> {
  const pts: Record<string, number> = {};
  for (const o of obs) if (o.value !== null) pts[o.key] = o.value;
  for (const p of procs) pts[`${p.name}_count`] = p.count;
  for (const p of ports) pts[`port_${p.port}_listening`] = p.listening ? 1 : 0;
  return pts;
}
