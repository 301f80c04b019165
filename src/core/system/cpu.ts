/**
 * CPU utilisation from /proc/stat deltas. A sampler keeps the previous counters; `sample()` returns the busy share
 * since the previous call (the first call: since boot). Busy = everything but idle + iowait; steal counts as busy
 * (the guest could not run), guest/guest_nice are already inside user/nice and are not added twice.
 */
import { readProc, round2 } from './proc-read.js';

export interface CpuTimes {
  busy: number;
  total: number;
}

export interface CpuStat {
  total: CpuTimes;
  perCore: CpuTimes[];
  /** Boot time (Unix ms) from the btime line. */
  bootTimeMs: number;
}

export interface CpuUsage {
  /** Busy % of all cores together, 0–100. */
  totalPct: number;
  /** Busy % per core, 0–100, in core order. */
  perCorePct: number[];
  cores: number;
  /** Length of the interval the figures cover. */
  intervalMs: number;
}

function parseCpuLine(fields: string[]): CpuTimes {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const v = fields.slice(1, 9).map((x) => Number(x) || 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  const total = v.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export function parseProcStat(text: string): CpuStat {
  let total: CpuTimes = { busy: 0, total: 0 };
  const perCore: CpuTimes[] = [];
  let bootTimeMs = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('cpu')) {
      const fields = line.trim().split(/\s+/);
      if (fields[0] === 'cpu') total = parseCpuLine(fields);
      else perCore.push(parseCpuLine(fields));
    } else if (line.startsWith('btime ')) {
      bootTimeMs = Number(line.slice(6)) * 1000;
    }
  }
  return { total, perCore, bootTimeMs };
}

export function readCpuStat(procRoot = '/proc'): CpuStat {
  const text = readProc(`${procRoot}/stat`);
  if (text === undefined) throw new Error(`cannot read ${procRoot}/stat`);
  return parseProcStat(text);
}

function pct(prev: CpuTimes | undefined, cur: CpuTimes): number {
  const dTotal = cur.total - (prev?.total ?? 0);
  const dBusy = cur.busy - (prev?.busy ?? 0);
  if (dTotal <= 0) return 0;
  return round2(Math.min(100, Math.max(0, (dBusy * 100) / dTotal)));
}

/** CPU % between two /proc/stat snapshots (prev undefined: since boot). */
export function cpuUsageBetween(prev: CpuStat | undefined, cur: CpuStat, intervalMs: number): CpuUsage {
  return {
    totalPct: pct(prev?.total, cur.total),
    perCorePct: cur.perCore.map((c, i) => pct(prev?.perCore[i], c)),
    cores: cur.perCore.length,
    intervalMs,
  };
}

export interface CpuSampler {
  /** Usage since the previous sample (first call: since boot). */
  sample(): CpuUsage;
  /** Time of the previous sample (Unix ms), undefined before the first. */
  readonly lastSampleMs: number | undefined;
}

export function createCpuSampler(opts: { procRoot?: string; now?: () => number } = {}): CpuSampler {
  const now = opts.now ?? Date.now;
  let prev: CpuStat | undefined;
  let prevMs: number | undefined;
  return {
    sample(): CpuUsage {
      const cur = readCpuStat(opts.procRoot);
      const t = now();
      const usage = cpuUsageBetween(prev, cur, prevMs === undefined ? 0 : t - prevMs);
      prev = cur;
      prevMs = t;
      return usage;
    },
    get lastSampleMs() {
      return prevMs;
    },
  };
}
