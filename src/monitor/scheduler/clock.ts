/**
 * The scheduler's only source of time. Production uses the system clock; tests inject a fake one
 * (clock.fake.ts) that advances instantly.
 */
export type TimerHandle = unknown;

export interface Clock {
  /** Unix ms. */
  now(): number;
  setTimeout(fn: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock. Its timers are unref'd: a pending schedule alone doesn't keep the process alive. */
export function createSystemClock(): Clock {
  return {
    now: () => Date.now(),
    setTimeout: (fn, delayMs) => {
      const t = setTimeout(fn, delayMs);
      t.unref();
      return t;
    },
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
}
