/**
 * A manual clock for tests: time moves only when advanced; timers fire in due order, and the microtasks/immediates
 * queued by each timer callback are flushed before the next one fires.
 */
import type { Clock, TimerHandle } from './clock.js';

interface FakeTimer {
  id: number;
  atMs: number;
  fn: () => void;
}

export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing every timer due on the way (and flushing async work after each). */
  advance(ms: number): Promise<void>;
  /** Moves time to `atMs` (>= now). */
  advanceTo(atMs: number): Promise<void>;
  /** A promise that resolves after `ms` of fake time. */
  sleep(ms: number): Promise<void>;
  /** Lets pending promise chains settle without moving time. */
  flush(): Promise<void>;
  /** Moves time forward `stepMs` at a time until `p` settles (e.g. a stop waiting on timers); resolves as `p`. */
  advanceUntil<T>(p: Promise<T>, stepMs?: number): Promise<T>;
  pendingTimers(): number;
}

const flushOnce = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export function createFakeClock(startMs = Date.UTC(2025, 0, 1)): FakeClock {
  let nowMs = startMs;
  let seq = 0;
  const timers = new Map<number, FakeTimer>();

  const earliest = (): FakeTimer | undefined => {
    let best: FakeTimer | undefined;
    for (const t of timers.values())
      if (best === undefined || t.atMs < best.atMs || (t.atMs === best.atMs && t.id < best.id)) best = t;
    return best;
  };

  const clock: FakeClock = {
    now: () => nowMs,
    setTimeout(fn: () => void, delayMs: number): TimerHandle {
      const id = ++seq;
      timers.set(id, { id, atMs: nowMs + Math.max(0, delayMs), fn });
      return id;
    },
    clearTimeout(handle: TimerHandle): void {
      timers.delete(handle as number);
    },
    async advanceTo(atMs: number): Promise<void> {
      await flushOnce();
      for (;;) {
        const t = earliest();
        if (t === undefined || t.atMs > atMs) break;
        timers.delete(t.id);
        nowMs = Math.max(nowMs, t.atMs);
        t.fn();
        await flushOnce();
      }
      nowMs = Math.max(nowMs, atMs);
      await flushOnce();
    },
    advance(ms: number): Promise<void> {
      return clock.advanceTo(nowMs + ms);
    },
    sleep(ms: number): Promise<void> {
      return new Promise((resolve) => clock.setTimeout(resolve, ms));
    },
    async flush(): Promise<void> {
      await flushOnce();
      await flushOnce();
    },
    async advanceUntil<T>(p: Promise<T>, stepMs = 1000): Promise<T> {
      let settled = false;
      const done = p.finally(() => (settled = true));
      while (!settled) await clock.advance(stepMs);
      return done;
    },
    pendingTimers: () => timers.size,
  };
  return clock;
}
