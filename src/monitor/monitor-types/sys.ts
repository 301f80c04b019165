/**
 * sys: the health of the machine the monitor service runs on, read from /proc (no process spawned): CPU %, memory %,
 * swap %, used % per mounted real filesystem, load 1/5/15.
 *
 * thresholdValue = the highest utilisation % among CPU, memory, swap and every disk (load is not a % and is not part
 * of it), so threshMin/Maj/Cri read as "any resource above N % used". responseTimeMs = wall time of the reading.
 * Outcome: always 'up' when /proc could be read ('exception' when it could not: not Linux, /proc not mounted).
 *
 * CPU % covers the time since the previous check of this type when that was under `maxCpuWindowMs` ago, else a short
 * fresh window (`cpuSampleMs`, at most a quarter of the timeout) measured inside the check.
 * Fields: none.
 */
import { Type } from '@sinclair/typebox';
import { createCpuSampler, type CpuSampler } from '../../core/system/cpu.js';
import { readDiskUsage } from '../../core/system/disks.js';
import { readLoad } from '../../core/system/load.js';
import { readMemory } from '../../core/system/memory.js';
import type { CheckContext, CheckResult, MonitorType } from './types.js';

export interface SysTypeOptions {
  procRoot?: string;
  cpuSampleMs?: number;
  maxCpuWindowMs?: number;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

async function cpuPct(sampler: CpuSampler, ctx: CheckContext, opts: SysTypeOptions): Promise<number> {
  const last = sampler.lastSampleMs;
  if (last === undefined || ctx.now() - last > (opts.maxCpuWindowMs ?? 600_000) || ctx.now() - last < 50) {
    sampler.sample();
    await sleep(Math.min(opts.cpuSampleMs ?? 250, Math.floor(ctx.timeoutMs / 4)), ctx.signal);
  }
  return sampler.sample().totalPct;
}

export function createSysType(opts: SysTypeOptions = {}): MonitorType {
  const sampler = createCpuSampler({ procRoot: opts.procRoot });
  return {
    id: 'sys',
    fields: Type.Object({}),
    required: [],
    secretFields: [],
    thresholdsOn: () => 'value',
    autoThresholds: false,
    async check(_config, ctx): Promise<CheckResult> {
      const started = performance.now();
      try {
        const cpu = await cpuPct(sampler, ctx, opts);
        const mem = readMemory(opts.procRoot);
        const load = readLoad(opts.procRoot);
        const disks = await readDiskUsage({
          procRoot: opts.procRoot,
          timeoutMs: Math.max(100, Math.floor(ctx.timeoutMs / 2)),
        });
        const metrics: Record<string, number> = {
          cpuPct: cpu,
          memUsedPct: mem.usedPct,
          swapUsedPct: mem.swapUsedPct,
          load1: load.load1,
          load5: load.load5,
          load15: load.load15,
        };
        let maxDisk = 0;
        for (const d of disks) {
          if (d.error) continue;
          metrics[`diskUsedPct:${d.mountPoint}`] = d.usedPct;
          maxDisk = Math.max(maxDisk, d.usedPct);
        }
        metrics.maxDiskUsedPct = maxDisk;
        const highest = Math.max(cpu, mem.usedPct, mem.swapUsedPct, maxDisk);
        const worst = [
          ['cpu', cpu],
          ['memory', mem.usedPct],
          ['swap', mem.swapUsedPct],
          ['disk', maxDisk],
        ].sort((a, b) => (b[1] as number) - (a[1] as number))[0]!;
        return {
          outcome: 'up',
          responseTimeMs: Math.round(performance.now() - started),
          thresholdValue: highest,
          metrics,
          message: `cpu ${cpu}%, memory ${mem.usedPct}%, swap ${mem.swapUsedPct}%, disk max ${maxDisk}%, load ${load.load1}/${load.load5}/${load.load15}; highest: ${worst[0]}`,
          details: {
            disks: disks.map((d) => ({
              mountPoint: d.mountPoint,
              fsType: d.fsType,
              usedPct: d.usedPct,
              totalBytes: d.totalBytes,
              error: d.error,
            })),
          },
        };
      } catch (e) {
        return {
          outcome: 'exception',
          responseTimeMs: Math.round(performance.now() - started),
          message: `cannot read /proc: ${(e as Error).message}`,
        };
      }
    },
  };
}

export const sysType: MonitorType = createSysType();
export default sysType;
