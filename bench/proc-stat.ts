/**
 * CPU time of a process as Linux accounts it (/proc/<pid>/stat), for the benches that measure other processes
 * (service instances, PostgreSQL backends): user + system clock ticks, TICK_HZ per second.
 */
import fs from 'node:fs';

export const TICK_HZ = 100; // USER_HZ on Linux

/** User + system ticks of `pid` so far; 0 once it is gone. */
export function cpuTicks(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}
