/** Runs a cycle every `sched` minutes (`<N>MIN`), re-armed when the setting changes. Errors are logged, never thrown. */
import type { Logger } from 'pino';
import { parseSchedMinutes, type AgentSettings } from '../settings.js';
import type { Discovery } from './cycle.js';

export interface DiscoverySchedule {
  stop(): void;
}

export function startSchedule(
  d: Discovery,
  settings: AgentSettings,
  log: Logger,
  opts: { runAtStart?: boolean } = {},
): DiscoverySchedule {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const fire = (): void => {
    d.run().catch((e: Error) => log.error({ err: e.message }, 'scheduled discovery cycle failed'));
    arm();
  };
  const arm = (): void => {
    clearTimeout(timer);
    if (stopped) return;
    const minutes = parseSchedMinutes(settings.get().sched ?? '') ?? 5;
    timer = setTimeout(fire, minutes * 60_000);
    timer.unref();
  };
  let lastSched = settings.get().sched;
  settings.onChange((s) => {
    if (s.sched !== lastSched) {
      lastSched = s.sched;
      arm();
    }
  });
  if (opts.runAtStart !== false)
    setImmediate(() => {
      if (!stopped) void d.run().catch((e: Error) => log.error({ err: e.message }, 'first discovery cycle failed'));
    });
  arm();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
