/**
 * Benches only: preloaded into a service process (`node --import ./bench/cpu-profile-hook.ts …`) so that a bench can
 * take a V8 CPU profile of a chosen window of a child process. SIGUSR2 starts the profiler; the next SIGUSR2 stops
 * it and writes `<BENCH_CPU_PROFILE>/<BENCH_PROFILE_LABEL or pid>-<n>.cpuprofile`. `BENCH_PROFILE_START=1` starts it
 * at once (a start-up profile; the first SIGUSR2 then writes it); `BENCH_PROFILE_INTERVAL_US` sets the sampling
 * interval. Nothing of this is loaded by the services themselves.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';

const dir = process.env.BENCH_CPU_PROFILE;
// The sampling interval in µs (default 500). Each sample interrupts the process, waking it when idle: a mostly idle
// process (a cluster member at a third of the load) is distorted more than a busy one; 5,000–10,000 keeps that small.
const INTERVAL_US = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 500);
if (dir) {
  const label = process.env.BENCH_PROFILE_LABEL ?? String(process.pid);
  let session: Session | undefined;
  let n = 0;
  const start = async (): Promise<void> => {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: INTERVAL_US });
    await session.post('Profiler.start');
  };
  const stop = async (): Promise<void> => {
    const s = session!;
    session = undefined;
    const { profile } = await s.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${label}-${n++}.cpuprofile`), JSON.stringify(profile));
    s.disconnect();
  };
  process.on('SIGUSR2', () => void (session ? stop() : start()));
  if (process.env.BENCH_PROFILE_START === '1') void start();
}
