/**
 * Push monitors' side of the service (docs/checks-push.md): finds the monitor a ping's token belongs to (by the
 * token's SHA-256, compared in constant time; the token itself is never stored or logged), bounds each token's rate,
 * notes the ping in the ledger and asks the engine for a run, so the runner records the result like any other
 * (status, history, alerts, dependencies, maintenance). A deadline timer per monitor asks for a run once the monitor
 * is late (period + grace after its last ping); between pings its scheduled runs re-evaluate it like any monitor.
 * Runs are coalesced: one run at a time per monitor, and another only if a ping arrived that the last run did not see.
 * None of this is on the scheduler's run path.
 */
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { hashPushToken } from '../monitor-types/push.js';
import type { MonitorsService } from '../monitors/monitors.service.js';
import type { StoredMonitor } from '../monitors/monitors.repo.js';
import type { RunResult } from '../monitors/run.service.js';
import { baseOf, lateAfterMs, type PingKind, type PushLedger } from './push-ledger.js';

/** Per token: a burst of PING_BURST pings, then one per PING_REFILL_MS (a job pings a few times per run). */
export const PING_BURST = 10;
export const PING_REFILL_MS = 1000;
/** The part of a ping's body kept as the run's message. */
export const PING_MESSAGE_CHARS = 1000;
/** setTimeout's longest delay; a later deadline is re-armed when this fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface PushServiceDeps {
  monitors: MonitorsService;
  ledger: PushLedger;
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
  private started = false;

  constructor(private readonly deps: PushServiceDeps) {
    this.now = deps.now ?? Date.now;
    for (const m of deps.monitors.list({ type: 'push' })) this.index(m.name, m);
    deps.monitors.onChange((name, m) => this.index(name, m));
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

  /** One ping: `signal` from the path (start, fail, success, an exit code), `body` the job's text. */
  ping(token: string, signal: string | undefined, body: unknown): PingAnswer {
    const name = this.lookup(token);
    this.takeToken(name);
    const { kind, exitCode } = parseSignal(signal);
    const m = this.deps.monitors.get(name);
    this.deps.ledger.record(name, kind, this.now(), { exitCode, message: pingMessage(body) });
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
        else this.trigger(name);
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
