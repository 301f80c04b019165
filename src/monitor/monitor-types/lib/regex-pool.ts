/**
 * Worker threads that run user regexes (RE2 sources from safe-regex.ts) with re2js, so a match never runs on the
 * service's event loop. Each match has a hard bound: past `timeoutMs` its worker is terminated (V8 stops it at once)
 * and a fresh one starts for the next job. Workers start on first use, hold an LRU of compiled patterns, are
 * unref'd while idle and capped in memory. Jobs wait in a bounded FIFO; a job whose signal aborts leaves the queue.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

export interface RegexPoolOptions {
  /** Hard bound of one match in ms. */
  timeoutMs?: number;
  /** Worker threads (default: one on a machine of up to 2 cores, else 2). */
  workers?: number;
  /** Jobs that may wait; past it a job is refused at once. */
  maxQueued?: number;
}

export interface PoolJob {
  source: string;
  /** The text, or its UTF-8 bytes (decoded in the worker: a body never becomes a string on the event loop). */
  text: string | Uint8Array;
  mode: 'test' | 'exec';
}

export type PoolResult =
  | {
      ok: true;
      found: boolean;
      match: null | { groups: (string | null)[]; named: Record<string, string | null>; index: number };
    }
  | { ok: false; error: string };

// Plain CommonJS run by each worker (eval: no loader, no TypeScript, nothing of the service's modules).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2jsPath);
const cache = new Map();
parentPort.postMessage({ ready: true });
function compiled(source) {
  let re = cache.get(source);
  if (re) { cache.delete(source); cache.set(source, re); return re; }
  re = RE2JS.compile(source);
  cache.set(source, re);
  if (cache.size > 256) cache.delete(cache.keys().next().value);
  return re;
}
parentPort.on('message', ({ source, text: raw, mode }) => {
  try {
    const text = typeof raw === 'string' ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
    const re = compiled(source);
    const found = re.test(text);
    if (mode === 'test' || !found) { parentPort.postMessage({ ok: true, found, match: null }); return; }
    const m = re.exec(text);
    if (m === null) { parentPort.postMessage({ ok: true, found: false, match: null }); return; }
    const named = {};
    for (const [k, v] of Object.entries(m.groups ?? {})) named[k] = v === undefined ? null : v;
    parentPort.postMessage({ ok: true, found: true, match: { groups: Array.from(m, (v) => v === undefined ? null : v), named, index: m.index } });
  } catch (e) {
    parentPort.postMessage({ ok: false, error: 'pattern failed: ' + String(e && e.message || e).slice(0, 200) });
  }
});
`;

interface Pending {
  job: PoolJob;
  resolve(r: PoolResult): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  /** Set once the worker has loaded re2js: the time bound starts when a job reaches a ready worker. */
  ready: boolean;
  busy?: Pending;
  timer?: NodeJS.Timeout;
}

export interface RegexPool {
  run(job: PoolJob, signal?: AbortSignal): Promise<PoolResult>;
  close(): Promise<void>;
}

export function createRegexPool(opts: RegexPoolOptions = {}): RegexPool {
  const timeoutMs = opts.timeoutMs ?? 1_000;
  const size = opts.workers ?? (availableParallelism() <= 2 ? 1 : 2);
  const maxQueued = opts.maxQueued ?? 10_000;
  const re2jsPath = createRequire(import.meta.url).resolve('re2js');
  const slots: (Slot | undefined)[] = new Array<Slot | undefined>(size).fill(undefined);
  const queue: Pending[] = [];
  let closed = false;

  function finish(slot: Slot, r: PoolResult): void {
    const p = slot.busy;
    if (slot.timer) clearTimeout(slot.timer);
    slot.busy = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    if (p) {
      if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
      p.resolve(r);
    }
    pump();
  }

  function drop(i: number, slot: Slot, r: PoolResult): void {
    if (slots[i] === slot) slots[i] = undefined;
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate();
    finish(slot, r);
  }

  function spawn(i: number): Slot {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { re2jsPath },
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
    });
    const slot: Slot = { worker, ready: false };
    worker.on('message', (r: PoolResult | { ready: true }) => {
      if ('ready' in r) {
        slot.ready = true;
        pump();
        if (!slot.busy) worker.unref();
      } else finish(slot, r);
    });
    worker.on('error', (e: Error & { code?: string }) => {
      const why = e.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'used too much memory and was stopped' : 'failed';
      drop(i, slot, { ok: false, error: `pattern ${why}` });
    });
    worker.on('exit', () => drop(i, slot, { ok: false, error: 'pattern worker stopped' }));
    slots[i] = slot; // ref'd until ready: a job is waiting for it
    return slot;
  }

  function pump(): void {
    if (closed) return;
    for (let i = 0; i < size && queue.length > 0; i++) {
      const cur = slots[i];
      if (cur?.busy) continue;
      const slot = cur ?? spawn(i);
      if (!slot.ready) continue;
      const p = queue.shift()!;
      slot.busy = p;
      slot.worker.ref();
      slot.timer = setTimeout(
        () => drop(i, slot, { ok: false, error: `pattern took longer than ${timeoutMs} ms and was stopped` }),
        timeoutMs,
      );
      slot.worker.postMessage(p.job);
    }
  }

  return {
    run(job, signal) {
      if (closed) return Promise.resolve({ ok: false, error: 'pattern runner is closed' });
      if (signal?.aborted) return Promise.resolve({ ok: false, error: 'aborted before the pattern ran' });
      if (queue.length >= maxQueued) return Promise.resolve({ ok: false, error: 'too many patterns waiting to run' });
      return new Promise<PoolResult>((resolve) => {
        const p: Pending = { job, resolve, signal };
        if (signal) {
          p.onAbort = () => {
            const at = queue.indexOf(p);
            if (at === -1) return;
            queue.splice(at, 1);
            resolve({ ok: false, error: 'aborted before the pattern ran' });
          };
          signal.addEventListener('abort', p.onAbort, { once: true });
        }
        queue.push(p);
        pump();
      });
    },
    async close() {
      closed = true;
      for (const p of queue.splice(0)) p.resolve({ ok: false, error: 'pattern runner is closed' });
      await Promise.all(
        slots.map(async (slot, i) => {
          if (!slot) return;
          slots[i] = undefined;
          slot.worker.removeAllListeners();
          if (slot.timer) clearTimeout(slot.timer);
          slot.busy?.resolve({ ok: false, error: 'pattern runner is closed' });
          await slot.worker.terminate();
        }),
      );
    },
  };
}
