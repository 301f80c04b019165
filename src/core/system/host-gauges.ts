/**
 * Host gauges for a Prometheus registry (the monitor service's /api/metrics): CPU busy %, cores, memory and swap
 * (bytes and %), load 1/5/15, uptime, and per mounted real filesystem its size, used bytes and used %
 * (labels mount, fstype) — the `sys` monitor's figures, as Prometheus users expect them next to per-monitor series.
 *
 * Cheap per scrape: one snapshot read from /proc (and statfs per mount, bounded by a timeout) serves every gauge and
 * every scrape within `maxAgeMs` (default 5 s). CPU % covers the time since the previous snapshot (the first one:
 * since the gauges were registered), so with a regular scraper it is the busy share of the scrape interval.
 */
import { Gauge, type Registry } from 'prom-client';
import { createCpuSampler } from './cpu.js';
import { readDiskUsage, type DiskUsage } from './disks.js';
import { readLoad, type LoadAvg } from './load.js';
import { readMemory, type MemoryInfo } from './memory.js';
import { readUptime } from './uptime.js';

export interface HostSnapshot {
  cpuPct: number;
  cores: number;
  memory: MemoryInfo;
  load: LoadAvg;
  uptimeS: number;
  disks: DiskUsage[];
}

export interface HostGaugeOptions {
  /** Metric name prefix, e.g. sentinel_host. */
  prefix: string;
  procRoot?: string;
  maxAgeMs?: number;
  /** statfs bound per snapshot (a dead network mount must not hold the scrape). */
  diskTimeoutMs?: number;
  now?: () => number;
}

/** Registers the host gauges; returns the snapshot reader (cached), for tests. */
export function registerHostGauges(registry: Registry, o: HostGaugeOptions): () => Promise<HostSnapshot> {
  const now = o.now ?? Date.now;
  const maxAgeMs = o.maxAgeMs ?? 5_000;
  const cpu = createCpuSampler({ procRoot: o.procRoot, now });
  try {
    cpu.sample(); // the first snapshot's CPU % then covers the time since start, not since boot
  } catch {
    // no /proc: the gauges will be absent (each collect ignores a failed snapshot)
  }
  let cached: { atMs: number; snap: Promise<HostSnapshot> } | undefined;
  const snapshot = (): Promise<HostSnapshot> => {
    const t = now();
    if (cached && t - cached.atMs < maxAgeMs) return cached.snap;
    const snap = (async (): Promise<HostSnapshot> => {
      const c = cpu.sample();
      return {
        cpuPct: c.totalPct,
        cores: c.cores,
        memory: readMemory(o.procRoot),
        load: readLoad(o.procRoot),
        uptimeS: Math.round(readUptime(o.procRoot, t).uptimeMs / 1000),
        disks: (await readDiskUsage({ procRoot: o.procRoot, timeoutMs: o.diskTimeoutMs ?? 1_000 })).filter(
          (d) => !d.error,
        ),
      };
    })();
    cached = { atMs: t, snap };
    snap.catch(() => (cached = undefined));
    return snap;
  };
  const p = o.prefix;
  const gauge = (
    name: string,
    help: string,
    read: (s: HostSnapshot, set: (v: number, labels?: Record<string, string>) => void) => void,
    labelNames: string[] = [],
  ) =>
    new Gauge({
      name: `${p}_${name}`,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        let s: HostSnapshot;
        try {
          s = await snapshot();
        } catch {
          return;
        }
        read(s, (v, labels) => (labels ? this.set(labels, v) : this.set(v)));
      },
    });
  gauge('cpu_used_percent', 'CPU busy share of all cores since the previous reading, %', (s, set) => set(s.cpuPct));
  gauge('cpu_cores', 'logical CPU cores', (s, set) => set(s.cores));
  gauge('memory_total_bytes', 'physical memory', (s, set) => set(s.memory.totalBytes));
  gauge('memory_used_bytes', 'memory in use (total - available)', (s, set) => set(s.memory.usedBytes));
  gauge('memory_available_bytes', 'memory available for new work', (s, set) => set(s.memory.availableBytes));
  gauge('memory_used_percent', 'memory in use, %', (s, set) => set(s.memory.usedPct));
  gauge('swap_total_bytes', 'swap space', (s, set) => set(s.memory.swapTotalBytes));
  gauge('swap_used_bytes', 'swap in use', (s, set) => set(s.memory.swapUsedBytes));
  gauge('swap_used_percent', 'swap in use, % (0 without swap)', (s, set) => set(s.memory.swapUsedPct));
  gauge('load1', 'load average over 1 minute', (s, set) => set(s.load.load1));
  gauge('load5', 'load average over 5 minutes', (s, set) => set(s.load.load5));
  gauge('load15', 'load average over 15 minutes', (s, set) => set(s.load.load15));
  gauge('uptime_seconds', 'time since the host booted', (s, set) => set(s.uptimeS));
  const disk = (name: string, help: string, pick: (d: DiskUsage) => number) =>
    gauge(
      name,
      help,
      (s, set) => {
        for (const d of s.disks) set(pick(d), { mount: d.mountPoint, fstype: d.fsType });
      },
      ['mount', 'fstype'],
    );
  disk('disk_total_bytes', 'filesystem size', (d) => d.totalBytes);
  disk('disk_used_bytes', 'filesystem space used', (d) => d.usedBytes);
  disk('disk_used_percent', 'filesystem space used, % of what non-root users can use (as df)', (d) => d.usedPct);
  return snapshot;
}
