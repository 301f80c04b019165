/**
 * Push monitors' side of the service (docs/checks-push.md): finds the monitor a ping's token belongs to (by the
 * token's SHA-256, compared in constant time; the token itself is never stored or logged), bounds each token's rate,
 * notes the ping in the ledger and asks the engine for a run, so the runner records the result like any other
 * (status, history, alerts, dependencies, maintenance). A deadline timer per monitor asks for a run once the monitor
 * is late (period + grace after its last ping); between pings its scheduled runs re-evaluate it like any monitor.
 * Runs are coalesced: one run at a time per monitor, and another only if a ping arrived that the last run did not see.
 * None of this is on the scheduler's run path.
 *
 * In a cluster (docs/cluster.md "Push monitors") a ping is handled by the instance holding the monitor's shard lease,
 * like its scheduled runs: another instance forwards it there (cluster-client.ts) and returns the holder's answer,
 * so one instance writes the monitor's ledger, history and alert state. What was heard is stored (bucket `push`) and
 * every instance follows it through the store's change feed, so a new holder after a handover knows the last pings,
 * and every instance's details show them. Deadline timers run on every instance but only the holder runs the check.
 */
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import type { Bucket as StoreBucket, KvStore } from '../../core/storage/kv-store.js';
import type { ClusterClient } from '../cluster/cluster-client.js';
import { hashPushToken } from '../monitor-types/push.js';
import type { MonitorsService } from '../monitors/monitors.service.js';
import type { StoredMonitor } from '../monitors/monitors.repo.js';
import type { RunResult } from '../monitors/run.service.js';
import { baseOf, lateAfterMs, type PingKind, type PushLedger, type PushRecord } from './push-ledger.js';

/** Per token: a burst of PING_BURST pings, then one per PING_REFILL_MS (a job pings a few times per run). */
export const PING_BURST = 10;
export const PING_REFILL_MS = 1000;
/** The part of a ping's body kept as the run's message. */
export const PING_MESSAGE_CHARS = 1000;
/** setTimeout's longest delay; a later deadline is re-armed when this fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** In a cluster: where a monitor's pings go. */
export interface PushForwarding {
  client: ClusterClient;
  /** The base URL of the live instance holding the monitor's lease, when that is another instance. */
  holderAddress(name: string): string | undefined;
  /** True when this instance runs the monitor (holds its lease). */
  runsHere(name: string): boolean;
}

export interface PushServiceDeps {
  monitors: MonitorsService;
  ledger: PushLedger;
  /** Where what was heard is stored and followed (bucket `push`). */
  store: KvStore;
  /** Absent with one process: every ping is handled here. */
  cluster?: PushForwarding;
  runNow(name: string): Promise<RunResult>;
  timezone(): string;
  log: Logger;
  now?: () => number;
}

export interface PingAnswer {
  code: number;
  message: string;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

/** A ping's path word: start, fail, success (or none) or an exit code 0-255 (0 = success). */
export function parseSignal(signal: string | undefined): { kind: PingKind; exitCode?: number } {
  if (signal === undefined || signal === '' || signal === 'success') return { kind: 'success' };
  if (signal === 'start' || signal === 'fail') return { kind: signal };
  if (/^\d{1,3}$/.test(signal) && Number(signal) <= 255) {
    const exitCode = Number(signal);
    return { kind: exitCode === 0 ? 'success' : 'fail', exitCode };
  }
  throw AppError.badRequest('the ping signal must be start, fail, success or an exit code 0-255', 'params.signal');
}

/** The job's text: control characters (except tab/newline) removed, trimmed, bounded. */
export function pingMessage(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  const text = body.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').trim();
  return text === '' ? undefined : text.slice(0, PING_MESSAGE_CHARS);
}

export class PushService {
  private readonly byHash = new Map<string, string>();
  private readonly hashOf = new Map<string, string>();
  private readonly buckets = new Map<string, Bucket>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<string>();
  private readonly now: () => number;
  private readonly bucket: StoreBucket;
  private started = false;

  constructor(private readonly deps: PushServiceDeps) {
    this.now = deps.now ?? Date.now;
    this.bucket = deps.store.bucket('push');
    for (const m of deps.monitors.list({ type: 'push' })) this.index(m.name, m);
    deps.monitors.onChange((name, m) => this.index(name, m));
  }

  /** Reads what was heard (an earlier run, other instances) and follows other instances' writes. */
  async load(): Promise<void> {
    this.deps.store.watch('push', async (key) => {
      if (key === undefined) return this.reload();
      const name = String(key);
      this.take(name, await this.bucket.get<PushRecord>(name));
    });
    await this.reload();
  }

  private async reload(): Promise<void> {
    for await (const { key, value } of this.bucket.range<PushRecord>()) this.take(String(key), value);
  }

  private take(name: string, rec: PushRecord | undefined): void {
    if (!rec || !this.hashOf.has(name)) return;
    this.deps.ledger.apply(name, rec, this.now());
    this.arm(name);
  }

  /** Re-arms every deadline timer (the held shards changed: a monitor that became late while held elsewhere). */
  rearm(): void {
    for (const name of this.hashOf.keys()) this.arm(name);
  }

  start(): void {
    this.started = true;
    for (const name of this.hashOf.keys()) this.arm(name);
  }

  stop(): void {
    this.started = false;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  private index(name: string, m: StoredMonitor | undefined): void {
    const old = this.hashOf.get(name);
    if (old !== undefined) this.byHash.delete(old);
    this.hashOf.delete(name);
    if (!m || m.type !== 'push') {
      if (old !== undefined) this.bucket.delete(name).catch((e: unknown) => this.storeFailed(e, name));
      this.deps.ledger.forget(name);
      this.buckets.delete(name);
      clearTimeout(this.timers.get(name));
      this.timers.delete(name);
      return;
    }
    const hash = this.deps.monitors.plainConfig(m).token;
    if (hash) {
      this.byHash.set(hash, name);
      this.hashOf.set(name, hash);
    }
    this.deps.ledger.watch(name, this.now());
    if (this.started) this.arm(name);
  }

  /** The monitor a token belongs to, or 404 (the same answer for every unknown token; the token is not echoed). */
  private lookup(token: string): string {
    const hash = hashPushToken(token);
    const name = this.byHash.get(hash);
    const stored = name === undefined ? undefined : this.hashOf.get(name);
    const ok = stored !== undefined && crypto.timingSafeEqual(Buffer.from(stored, 'hex'), Buffer.from(hash, 'hex'));
    if (!ok || name === undefined) throw AppError.notFound('no push monitor with this token');
    return name;
  }

  /** 429 with Retry-After when the token's bucket is empty. */
  private takeToken(name: string): void {
    const nowMs = this.now();
    const b = this.buckets.get(name) ?? { tokens: PING_BURST, atMs: nowMs };
    b.tokens = Math.min(PING_BURST, b.tokens + (nowMs - b.atMs) / PING_REFILL_MS);
    b.atMs = nowMs;
    this.buckets.set(name, b);
    if (b.tokens < 1) {
      const retryAfterS = Math.max(1, Math.ceil(((1 - b.tokens) * PING_REFILL_MS) / 1000));
      throw new AppError(
        'TOO_MANY_REQUESTS',
        `too many pings for this token: at most ${PING_BURST} at once, then 1 per second`,
        {
          retryAfterS,
        },
      );
    }
    b.tokens -= 1;
  }

  private storeFailed(err: unknown, name: string): void {
    this.deps.log.warn({ err, monitor: name }, 'push: storing what was heard failed');
  }

  /**
   * One ping: `signal` from the path (start, fail, success, an exit code), `body` the job's text. In a cluster it is
   * sent to the lease holder unless `forwarded` (it comes from another instance) or the holder cannot be reached.
   */
  async ping(token: string, signal: string | undefined, body: unknown, forwarded = false): Promise<PingAnswer> {
    const name = this.lookup(token);
    this.takeToken(name);
    const { kind, exitCode } = parseSignal(signal);
    const address = forwarded ? undefined : this.deps.cluster?.holderAddress(name);
    if (address) {
      const path = `/push/${encodeURIComponent(token)}${signal === undefined ? '' : `/${signal}`}`;
      const text = typeof body === 'string' ? body : undefined;
      try {
        return (await this.deps.cluster!.client.send(address, path, {
          method: text === undefined ? 'GET' : 'POST',
          headers: text === undefined ? {} : { 'content-type': 'text/plain; charset=utf-8' },
          body: text,
        })) as PingAnswer;
      } catch (err) {
        if (err instanceof AppError) throw err;
        this.deps.log.warn(
          { err, monitor: name, holder: address },
          'push: lease holder unreachable, ping handled here',
        );
      }
    }
    const m = this.deps.monitors.get(name);
    this.deps.ledger.record(name, kind, this.now(), { exitCode, message: pingMessage(body) });
    this.bucket.put(name, this.deps.ledger.stored(name)).catch((e: unknown) => this.storeFailed(e, name));
    if (m.config.state !== 'on')
      return { code: 200, message: `${kind} ping noted; the monitor is off (not evaluated)` };
    this.arm(name);
    if (kind !== 'start') this.trigger(name);
    return { code: 200, message: `${kind} ping recorded` };
  }

  /** Runs the monitor until a run has seen every ping so far (one loop per monitor at a time). */
  private trigger(name: string): void {
    if (this.running.has(name)) return;
    this.running.add(name);
    void (async () => {
      try {
        for (let i = 0; i < 5; i++) {
          const seq = this.deps.ledger.get(name)?.seq ?? 0;
          const r = await this.deps.runNow(name);
          if (Number(r.details?.pingSeq ?? -1) >= seq && (this.deps.ledger.get(name)?.seq ?? 0) === seq) break;
        }
      } catch (e) {
        this.deps.log.debug({ err: e, monitor: name }, 'push run skipped');
      } finally {
        this.running.delete(name);
      }
    })();
  }

  /** (Re-)arms the monitor's deadline timer: a run once it is late. */
  private arm(name: string): void {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    const m = this.deps.monitors.repo.get(name);
    const s = this.deps.ledger.get(name);
    if (!this.started || !m || !s || m.config.state !== 'on') return;
    let lateMs: number;
    try {
      lateMs = lateAfterMs(this.deps.monitors.plainConfig(m), baseOf(s), this.deps.timezone());
    } catch (e) {
      this.deps.log.warn({ err: e, monitor: name }, 'push monitor has an unusable schedule: no deadline timer');
      return;
    }
    const delayMs = Math.max(0, lateMs + 1 - this.now());
    const t = setTimeout(
      () => {
        this.timers.delete(name);
        if (delayMs > MAX_TIMER_MS) this.arm(name);
        else if (this.deps.cluster?.runsHere(name) ?? true) this.trigger(name);
      },
      Math.min(delayMs, MAX_TIMER_MS),
    );
    t.unref();
    this.timers.set(name, t);
  }

  /** Added to the monitor's details: the ping paths (token shown as <token>) and what was last heard. */
  detailsOf(m: StoredMonitor, pushPort: number | null): Record<string, unknown> {
    if (!this.hashOf.has(m.name)) return {};
    const s = this.deps.ledger.get(m.name);
    const base = '/push/<token>';
    let lateAfter: number | null = null;
    try {
      lateAfter = s ? lateAfterMs(this.deps.monitors.plainConfig(m), baseOf(s), this.deps.timezone()) : null;
    } catch {
      lateAfter = null;
    }
    return {
      push: {
        pushPort,
        paths: { success: base, start: `${base}/start`, fail: `${base}/fail`, exitCode: `${base}/<exit code>` },
        lastPingMs: s?.lastPingMs ?? null,
        lastKind: s?.lastKind ?? null,
        lastStartMs: s?.lastStartMs ?? null,
        lastSuccessMs: s?.lastSuccessMs ?? null,
        lastFailMs: s?.lastFailMs ?? null,
        lastDurationMs: s?.durationMs ?? null,
        lateAfterMs: lateAfter,
      },
    };
  }
}
