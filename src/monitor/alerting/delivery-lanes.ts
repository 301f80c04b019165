/**
 * The delivery queue's lanes: one per channel with its own concurrency, so a slow or dead channel only fills its own
 * lane. A lane sends at most `concurrency` items at a time, pauses while a Retry-After holds (a rate limit is per
 * endpoint), and keeps each monitor's order: one item per monitor is being sent or retried (its holder); a later one
 * of that monitor waits (parked) until the one before is finished for good.
 */
import { type Lane, type QueueState, later } from './delivery-state.js';
import type { QueueItem } from './delivery-types.js';

export function laneFor(s: QueueState, id: string): Lane {
  let lane = s.lanes.get(id);
  if (!lane) {
    const c = s.o.concurrency;
    const concurrency = typeof c === 'number' ? c : (c?.[id] ?? 16);
    lane = {
      id,
      ready: [],
      head: 0,
      active: 0,
      concurrency,
      pausedUntilMs: 0,
      holders: new Map(),
      parked: new Map(),
      resumed: [],
    };
    s.lanes.set(id, lane);
  }
  return lane;
}

/** Makes the item ready in its lane now, or when its next attempt is due. */
export function schedule(s: QueueState, item: QueueItem): void {
  const lane = laneFor(s, item.channel);
  const wait = item.nextAttemptMs - s.now();
  if (wait > 0) later(s, wait, () => makeReady(s, lane, item));
  else makeReady(s, lane, item);
}

export function makeReady(s: QueueState, lane: Lane, item: QueueItem): void {
  lane.ready.push(item);
  pump(s, lane);
}

/** An item to send: the oldest item of each monitor goes first, even when it waits for a retry. */
export function admit(s: QueueState, item: QueueItem): void {
  s.outstanding++;
  const lane = laneFor(s, item.channel);
  if (!lane.holders.has(item.alert.monitor.name)) lane.holders.set(item.alert.monitor.name, item);
  schedule(s, item);
}

function pump(s: QueueState, lane: Lane): void {
  if (s.stopping.signal.aborted) return;
  const wait = lane.pausedUntilMs - s.now();
  if (wait > 0) {
    if (!lane.pauseTimer) {
      lane.pauseTimer = setTimeout(() => {
        lane.pauseTimer = undefined;
        pump(s, lane);
      }, wait);
    }
    return;
  }
  while (lane.active < lane.concurrency) {
    const item = lane.resumed.shift() ?? nextReady(lane);
    if (item === undefined) break;
    const key = item.alert.monitor.name;
    const holder = lane.holders.get(key);
    if (holder !== undefined && holder !== item) {
      // An earlier alert of this monitor is still being sent or retried: this one waits its turn.
      const waiting = lane.parked.get(key);
      if (waiting) waiting.push(item);
      else lane.parked.set(key, [item]);
      continue;
    }
    lane.holders.set(key, item);
    lane.active++;
    void s.attempt(lane, item).finally(() => {
      lane.active--;
      pump(s, lane);
    });
  }
}

function nextReady(lane: Lane): QueueItem | undefined {
  if (lane.head >= lane.ready.length) return undefined;
  const item = lane.ready[lane.head]!;
  lane.ready[lane.head++] = undefined as unknown as QueueItem;
  if (lane.head > 1024 && lane.head * 2 > lane.ready.length) {
    lane.ready = lane.ready.slice(lane.head);
    lane.head = 0;
  }
  return item;
}

/** An item is done for good: its monitor's next parked item (if any) is next in the lane. */
export function release(s: QueueState, item: QueueItem): void {
  const lane = s.lanes.get(item.channel);
  const key = item.alert.monitor.name;
  if (!lane || lane.holders.get(key) !== item) return;
  lane.holders.delete(key);
  const waiting = lane.parked.get(key);
  const next = waiting?.shift();
  if (waiting?.length === 0) lane.parked.delete(key);
  if (next) lane.resumed.push(next);
}

/** Clears the lanes and their pause timers (stop). */
export function clearLanes(s: QueueState): void {
  for (const lane of s.lanes.values()) {
    if (lane.pauseTimer) clearTimeout(lane.pauseTimer);
    lane.pauseTimer = undefined;
  }
  s.lanes.clear();
}
