/** disks: used % per mounted real filesystem and I/O rates per block device. */
import { createDiskIoSampler, readDiskUsage, type DiskIoRates, type DiskUsage } from '../../../core/system/disks.js';
import type { Collector } from './types.js';

export interface DiskFacts {
  usage: DiskUsage[];
  io: DiskIoRates[];
}

export function createDisksCollector(opts: { procRoot?: string; statfsTimeoutMs?: number } = {}): Collector<DiskFacts> {
  const io = createDiskIoSampler({ procRoot: opts.procRoot });
  return {
    id: 'disks',
    async collect() {
      return {
        usage: await readDiskUsage({ procRoot: opts.procRoot, timeoutMs: opts.statfsTimeoutMs }),
        io: io.sample(),
      };
    },
  };
}
