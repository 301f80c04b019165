/**
 * The scheduler's internal state, shared by its parts (scheduler.ts the public methods, dispatch-loop.ts the timer and
 * heap, scheduler-jobs.ts the queued and running jobs): one entry per monitor, the due heap, the gate, the counters.
 */
import type { Logger } from 'pino';
import { createSystemClock, type Clock, type TimerHandle } from './clock.js';
import { DueHeap, type HeapEntry } from './due-heap.js';
import { ConcurrencyGate, type GateJob } from './gate.js';
import { LatenessHistogram } from './lateness-histogram.js';
import type { ScheduleSpec, SpreadOptions } from './schedule.js';
import { createSpecRegistry, type SpecRegistry } from './spec-registry.js';
import type { RunTrigger, SchedulerOptions, SchedulerStats } from './scheduler-types.js';

export interface Deferred<R> {
  resolve(v: R): void;
  reject(e: unknown): void;
  promise: Promise<R>;
}

export interface Job<R> extends GateJob {
  entry: Entry<R>;
  dueMs: number;
  trigger: RunTrigger;
  deferred: Deferred<R> | null;
}

export interface Entry<R> extends HeapEntry {
  id: string;
  spec: ScheduleSpec;
  enabled: boolean;
  cls: string;
  offsetMs: number;
  fireMs: number;
  queuedJob: Job<R> | null;
  lastDueMs: number | null;
  lastStartMs: number | null;
  lastLatenessMs: number | null;
  /** UpsertOptions.transient: dropped when disabled and idle. */
  transient: boolean;
}

/** The counters of SchedulerStats (the documented fields there). */
export type Counters = Pick<
  SchedulerStats,
  'dueCount' | 'startedCount' | 'completedCount' | 'failedCount' | 'skippedOverlap' | 'missedCount' | 'manualCount'
>;

export interface SchedulerState<R> {
  readonly opts: SchedulerOptions<R>;
  readonly clock: Clock;
  readonly log: Logger | undefined;
  readonly spread: SpreadOptions;
  batchMs: number;
  readonly maxBatch: number;
  readonly gate: ConcurrencyGate<Job<R>>;
  readonly entries: Map<string, Entry<R>>;
  readonly inflight: Map<string, Promise<R>>;
  readonly heap: DueHeap<Entry<R>>;
  readonly specs: SpecRegistry;
  readonly hist: LatenessHistogram;
  readonly c: Counters;
  enabledCount: number;
  started: boolean;
  /** null: not armed. */
  timer: TimerHandle;
  armedAtMs: number;
  lastTickMs: number;
  seq: number;
}

export function createSchedulerState<R>(opts: SchedulerOptions<R>): SchedulerState<R> {
  return {
    opts,
    clock: opts.clock ?? createSystemClock(),
    log: opts.log,
    spread: { spreadFraction: opts.spreadFraction, maxSpreadMs: opts.maxSpreadMs, cronJitterMs: opts.cronJitterMs },
    batchMs: Math.max(0, opts.batchMs ?? 100),
    maxBatch: Math.max(1, opts.maxBatch ?? 5000),
    gate: new ConcurrencyGate<Job<R>>({ limit: opts.concurrencyLimit ?? 200, classCaps: opts.classCaps }),
    entries: new Map(),
    inflight: new Map(),
    heap: new DueHeap<Entry<R>>(),
    specs: createSpecRegistry(),
    hist: new LatenessHistogram(),
    c: {
      dueCount: 0,
      startedCount: 0,
      completedCount: 0,
      failedCount: 0,
      skippedOverlap: 0,
      missedCount: 0,
      manualCount: 0,
    },
    enabledCount: 0,
    started: false,
    timer: null,
    armedAtMs: Number.POSITIVE_INFINITY,
    lastTickMs: Number.NEGATIVE_INFINITY,
    seq: 0,
  };
}

export function newEntry<R>(id: string, spec: ScheduleSpec, cls: string): Entry<R> {
  return {
    id,
    spec,
    enabled: false,
    cls,
    offsetMs: 0,
    fireMs: 0,
    dueMs: 0,
    seq: 0,
    heapIndex: -1,
    queuedJob: null,
    lastDueMs: null,
    lastStartMs: null,
    lastLatenessMs: null,
    transient: false,
  };
}

export function createDeferred<R>(): Deferred<R> {
  let resolve!: (v: R) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<R>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { resolve, reject, promise };
}
