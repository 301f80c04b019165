/** system: CPU % (total, per core), memory, swap, load 1/5/15, uptime. */
import { createCpuSampler, type CpuUsage } from '../../../core/system/cpu.js';
import { readLoad, type LoadAvg } from '../../../core/system/load.js';
import { readMemory, type MemoryInfo } from '../../../core/system/memory.js';
import { readUptime, type Uptime } from '../../../core/system/uptime.js';
import type { Collector } from './types.js';

export interface SystemFacts {
  cpu: CpuUsage;
  memory: MemoryInfo;
  load: LoadAvg;
  uptime: Uptime;
}

export function createSystemCollector(opts: { procRoot?: string } = {}): Collector<SystemFacts> {
  const cpu = createCpuSampler({ procRoot: opts.procRoot });
  return {
    id: 'system',
    collect: (ctx) => ({
      cpu: cpu.sample(),
      memory: readMemory(opts.procRoot),
      load: readLoad(opts.procRoot),
      uptime: readUptime(opts.procRoot, ctx.now()),
    }),
  };
}
