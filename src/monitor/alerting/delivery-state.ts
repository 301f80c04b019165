/**
 * The delivery queue's internal state, shared by its parts (delivery-queue.ts the public methods, delivery-lanes.ts
 * the per-channel lanes, delivery-attempt.ts the sends and outcomes, delivery-sweep.ts a cluster's claims): the
 * lanes, the timers, the items awaiting durability, the counters and, in a cluster, the claim keeper.
 */
import type { Logger } from 'pino';
import { ClaimKeeper } from './delivery-claims.js';
import type { DeliveryQueueOptions, QueueItem } from './delivery-types.js';

export interface Lane {
  id: string;
  ready: QueueItem[];
  head: number;
  active: number;
  concurrency: number;
  pausedUntilMs: number;
  pauseTimer?: NodeJS.Timeout;
  /** Per monitor: its item being sent or retried; a later item of that monitor waits in `parked`. */
  holders: Map<string, QueueItem>;
  parked: Map<string, QueueItem[]>;
  /** Parked items whose turn has come: sent before `ready`. */
  resumed: QueueItem[];
}

export interface QueueState {
  readonly o: DeliveryQueueOptions;
  readonly log: Logger;
  readonly now: () => number;
  readonly maxAttempts: number;
  readonly baseBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly sendTimeoutMs: number;
  readonly logMax: number;
  readonly lanes: Map<string, Lane>;
  readonly timers: Set<NodeJS.Timeout>;
  /** Items queued here, by id: the write that makes them durable (a send waits for it). */
  readonly durable: Map<string, Promise<void>>;
  readonly inFlight: Set<AbortController>;
  readonly counts: { delivered: number; failed: number };
  /** Items admitted and not yet finished or given up (idle() waits for 0). */
  outstanding: number;
  readonly idleWaiters: Array<() => void>;
  stopping: AbortController;
  /** Delivery log entries (pruned past logMax · 1.1). */
  logCount: number;
  readonly keeper: ClaimKeeper | undefined;
  /** Cluster: the hold generation each admitted item was admitted under, and the admitted items by id. */
  readonly gens: WeakMap<QueueItem, number>;
  readonly admitted: Map<string, QueueItem>;
  sweepTimer: NodeJS.Timeout | undefined;
  /** Sends one item of a lane (delivery-attempt.ts); set by delivery-queue.ts. */
  attempt: (lane: Lane, item: QueueItem) => Promise<void>;
}

export function createQueueState(o: DeliveryQueueOptions): QueueState {
  return {
    o,
    log: o.log,
    now: o.now ?? Date.now,
    maxAttempts: o.maxAttempts ?? 8,
    baseBackoffMs: o.baseBackoffMs ?? 5_000,
    maxBackoffMs: o.maxBackoffMs ?? 10 * 60_000,
    sendTimeoutMs: o.sendTimeoutMs ?? 15_000,
    logMax: o.deliveryLogMax ?? 1_000,
    lanes: new Map(),
    timers: new Set(),
    durable: new Map(),
    inFlight: new Set(),
    counts: { delivered: 0, failed: 0 },
    outstanding: 0,
    idleWaiters: [],
    stopping: new AbortController(),
    logCount: 0,
    keeper: o.cluster ? new ClaimKeeper(o.store.claims, o.cluster, o.log) : undefined,
    gens: new WeakMap(),
    admitted: new Map(),
    sweepTimer: undefined,
    attempt: () => Promise.resolve(),
  };
}

/** A cluster's delivery lane key: `<channel> <monitor>` (delivery-claims.ts). */
export const keyOf = (item: QueueItem): string => `${item.channel} ${item.alert.monitor.name}`;

/** One admitted item is finished or given up. */
export function settle(s: QueueState): void {
  s.outstanding--;
  if (s.outstanding === 0) for (const w of s.idleWaiters.splice(0)) w();
}

/** Runs `fn` after `ms` on a timer stop() clears. */
export function later(s: QueueState, ms: number, fn: () => void): void {
  const t = setTimeout(
    () => {
      s.timers.delete(t);
      fn();
    },
    Math.max(0, ms),
  );
  s.timers.add(t);
}
