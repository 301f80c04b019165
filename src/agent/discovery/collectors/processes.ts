/** processes: every process (pid, ppid, name, cmdline, user, state, CPU %, RSS, threads, fds, start time). */
import type { ProcessInfo, ProcessSampler } from '../../../core/system/processes.js';
import type { Collector } from './types.js';

export function createProcessesCollector(sampler: ProcessSampler): Collector<ProcessInfo[]> {
  return { id: 'processes', collect: () => sampler.sample() };
}
