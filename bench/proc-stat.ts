/**
 * CPU time of a process as Linux accounts it (/proc/<pid>/stat), for the benches that measure other processes
 * (service instances, PostgreSQL backends): user + system clock ticks, TICK_HZ per second.
 */
import fs from 'node:fs';
import type pg from 'pg';

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

/**
 * CPU of one database's PostgreSQL backends over a window (not the sampling connection's own). The pools open and
 * close connections, so every sample lists the backends again: one first seen after the first sample counts from 0,
 * one that is gone keeps its last sample (a gone backend reads 0 ticks and is skipped, never subtracted).
 */
export class BackendCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private samples = 0;

  /** `dbName`: the database to watch; default the client's own. */
  constructor(
    private readonly client: pg.Client,
    private readonly dbName?: string,
  ) {}

  async sample(): Promise<void> {
    const r = await this.client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = coalesce($1::name, current_database()) AND pid <> pg_backend_pid()',
      [this.dbName ?? null],
    );
    const initial = this.samples++ === 0;
    for (const { pid } of r.rows) {
      const t = cpuTicks(pid);
      if (t === 0) continue;
      if (!this.first.has(pid)) this.first.set(pid, initial ? t : 0);
      this.last.set(pid, t);
    }
  }

  /** Samples now and every `intervalMs`; the returned stop samples once more after the last. */
  async every(intervalMs: number): Promise<() => Promise<void>> {
    await this.sample();
    let busy: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      busy = busy.then(() => this.sample());
    }, intervalMs);
    return async () => {
      clearInterval(timer);
      await busy;
      await this.sample();
    };
  }

  /** CPU milliseconds between each backend's first and last sample, summed. */
  ms(): number {
    let ticks = 0;
    for (const [pid, t] of this.last) ticks += t - this.first.get(pid)!;
    return ticks * (1000 / TICK_HZ);
  }
}
