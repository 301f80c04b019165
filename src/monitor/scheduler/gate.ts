/**
 * The concurrency gate: at most `limit` jobs run at once (live-adjustable), optional per-class caps (e.g. a
 * "browser" class capped lower), and a fair FIFO wait queue: the job that has waited longest and whose class has room
 * starts next, so a capped class at the head never blocks the others. Urgent jobs (run-now) go before all normal
 * jobs, FIFO among themselves. Cancelled jobs are dropped lazily when they reach the head.
 */
export interface GateJob {
  readonly cls: string;
  /** Set by the gate. */
  seq: number;
  cancelled: boolean;
  /** Set by the gate when the job starts. */
  started?: boolean;
  /** Starts the work; the promise must settle when the work is over (its outcome is ignored by the gate). */
  start(): Promise<unknown>;
}

const URGENT_BASE = Number.MIN_SAFE_INTEGER;

/** A FIFO with O(1) amortised shift. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(v: T): void {
    this.items.push(v);
  }
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head];
    (this.items as (T | undefined)[])[this.head] = undefined;
    this.head++;
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return v;
  }
}

interface ClassQueue<J> {
  urgent: Fifo<J>;
  normal: Fifo<J>;
  running: number;
}

export class ConcurrencyGate<J extends GateJob = GateJob> {
  private limit: number;
  private caps: Record<string, number>;
  private readonly classes = new Map<string, ClassQueue<J>>();
  private runningCount = 0;
  private queuedCount = 0;
  private seq = 0;
  private urgentSeq = 0;

  constructor(opts: { limit: number; classCaps?: Record<string, number> }) {
    this.limit = sanitiseLimit(opts.limit);
    this.caps = { ...(opts.classCaps ?? {}) };
  }

  get running(): number {
    return this.runningCount;
  }
  get queued(): number {
    return this.queuedCount;
  }
  get concurrencyLimit(): number {
    return this.limit;
  }

  setLimit(n: number): void {
    this.limit = sanitiseLimit(n);
    this.pump();
  }

  setClassCaps(caps: Record<string, number>): void {
    this.caps = { ...caps };
    this.pump();
  }

  classRunning(cls: string): number {
    return this.classes.get(cls)?.running ?? 0;
  }

  enqueue(job: J, urgent = false): void {
    job.seq = urgent ? URGENT_BASE + ++this.urgentSeq : ++this.seq;
    const q = this.classQueue(job.cls);
    (urgent ? q.urgent : q.normal).push(job);
    this.queuedCount++;
    this.pump();
  }

  /** Cancels a queued job (no effect once started). */
  cancel(job: J): void {
    if (job.cancelled || job.started === true) return;
    job.cancelled = true;
    this.queuedCount--;
  }

  private classQueue(cls: string): ClassQueue<J> {
    let q = this.classes.get(cls);
    if (q === undefined) {
      q = { urgent: new Fifo<J>(), normal: new Fifo<J>(), running: 0 };
      this.classes.set(cls, q);
    }
    return q;
  }

  /** Starts waiting jobs while there is room. */
  private pump(): void {
    while (this.runningCount < this.limit && this.queuedCount > 0) {
      const next = this.pickNext();
      if (next === undefined) return;
      this.startJob(next.job, next.q);
    }
  }

  private pickNext(): { job: J; q: ClassQueue<J> } | undefined {
    let best: { job: J; q: ClassQueue<J>; fifo: Fifo<J> } | undefined;
    for (const [cls, q] of this.classes) {
      const cap = this.caps[cls];
      if (cap !== undefined && q.running >= cap) continue;
      const fifo = headFifo(q);
      const job = fifo?.peek();
      if (fifo === undefined || job === undefined) continue;
      if (best === undefined || job.seq < best.job.seq) best = { job, q, fifo };
    }
    if (best === undefined) return undefined;
    best.fifo.shift();
    return best;
  }

  private startJob(job: J, q: ClassQueue<J>): void {
    this.queuedCount--;
    this.runningCount++;
    job.started = true;
    q.running++;
    let work: Promise<unknown>;
    try {
      work = job.start();
    } catch (e) {
      work = Promise.reject(e);
    }
    const release = (): void => {
      this.runningCount--;
      q.running--;
      this.pump();
    };
    work.then(release, release);
  }
}

/** The first non-cancelled job's FIFO of a class (urgent first); drops cancelled heads on the way. */
function headFifo<J extends GateJob>(q: ClassQueue<J>): Fifo<J> | undefined {
  for (const fifo of [q.urgent, q.normal]) {
    let head = fifo.peek();
    while (head !== undefined && head.cancelled) {
      fifo.shift();
      head = fifo.peek();
    }
    if (head !== undefined) return fifo;
  }
  return undefined;
}

function sanitiseLimit(n: number): number {
  if (!Number.isFinite(n)) return Number.MAX_SAFE_INTEGER;
  return Math.max(1, Math.floor(n));
}
