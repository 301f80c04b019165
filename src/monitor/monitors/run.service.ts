/**
 * Runs one monitor: the type's check under a deadline, retries, the status function (classify.ts), maintenance
 * windows (DOWNTIME), then hands the result to history and alerting. A check's failure is data; a check that throws
 * (a bug) becomes EXCEPTION and is logged; a check that ignores its abort signal is cut off one second after its
 * deadline, so a run always ends. In a cluster a scheduled run carries its shard lease (RunFence): a result whose
 * lease no longer holds is returned marked `fenced` and recorded nowhere. What a run stores is bounded
 * (result-bound.ts: message + details ≤ 64 KB).
 */
import { getEventListeners } from 'node:events';
import path from 'node:path';
import type { Logger } from 'pino';
import type {
  CheckContext,
  CheckResult,
  DbName,
  MonitorConfig,
  MonitorType,
  NetworkPolicy,
  Status,
} from '../monitor-types/types.js';
import { classify, fixedThresholds, type Thresholds } from './classify.js';
import type { MonitorsService } from './monitors.service.js';
import type { StoredMonitor } from './monitors.repo.js';
import { CheckBatcher } from './batcher.js';
import { boundResult } from './result-bound.js';

export interface RunResult {
  name: string;
  type: DbName;
  ts: number;
  status: Status;
  responseTimeMs: number;
  outcome: CheckResult['outcome'];
  attempts: number;
  message?: string;
  metrics?: Record<string, number>;
  details?: Record<string, unknown>;
  thresholds: Thresholds & { source: 'fixed' | 'auto' | 'none' };
  downtime: boolean;
  /** In a cluster: the shard lease's epoch the run was made under. */
  epoch?: number;
  /** True when the lease was lost before the result could be recorded: nothing went to history or alerting. */
  fenced?: boolean;
}

/** A scheduled run's shard lease in a cluster: checked just before the result is recorded. */
export interface RunFence {
  epoch: number;
  holds(): boolean;
}

/** Where results go after a run; each call returns at once (no awaiting I/O on the run path). */
export interface ResultSinks {
  record(m: StoredMonitor, r: RunResult): void;
}

export interface RunDeps {
  monitors: MonitorsService;
  types: ReadonlyMap<DbName, MonitorType>;
  log: Logger;
  policy: () => NetworkPolicy;
  secrets: CheckContext['secrets'];
  settings: CheckContext['settings'];
  artifactRoot: string;
  sinks: ResultSinks;
  /** Automatic thresholds for a monitor, when enabled and computed. */
  autoThresholds?: (m: StoredMonitor) => Thresholds | undefined;
  /** True while a maintenance window covers the monitor. */
  inDowntime?: (m: StoredMonitor, nowMs: number) => boolean;
  now?: () => number;
}

const DEFAULT_TIMEOUT_S = 10;
const GRACE_MS = 1000;
/** The abort reason of a check that has finished (one shared instance: a new Error per run costs a stack capture). */
const CHECK_FINISHED = new Error('check finished');

export class RunService {
  private readonly batchers = new Map<DbName, CheckBatcher>();
  private readonly now: () => number;

  constructor(private readonly deps: RunDeps) {
    this.now = deps.now ?? Date.now;
    for (const [id, t] of deps.types) if (t.checkBatch) this.batchers.set(id, new CheckBatcher(t));
  }

  /** Fixed thresholds win; automatic ones (computed from response times) apply only where thresholds compare the
   * response time (not a sys utilisation % or an api extracted value). */
  thresholdsFor(m: StoredMonitor): RunResult['thresholds'] {
    const fixed = fixedThresholds(m.config);
    if (fixed.threshMin !== undefined || fixed.threshMaj !== undefined || fixed.threshCri !== undefined)
      return { ...fixed, source: 'fixed' };
    const type = this.deps.types.get(m.type);
    if (type?.thresholdsOn && type.thresholdsOn(this.deps.monitors.plainConfig(m)) === 'value')
      return { source: 'none' };
    const auto = this.deps.autoThresholds?.(m);
    return auto ? { ...auto, source: 'auto' } : { source: 'none' };
  }

  /** A run's bounds: each attempt's timeout and the number of attempts (1 + retries). */
  private limits(type: MonitorType, config: MonitorConfig): { timeoutMs: number; attemptsMax: number } {
    const timeoutMs = Math.round(Number(config.timeout || type.defaults?.timeout || DEFAULT_TIMEOUT_S) * 1000);
    return { timeoutMs, attemptsMax: 1 + Number(config.retries || 0) };
  }

  /** The longest a run of `m` may take: every attempt to its timeout and the grace after it (run now forwarding). */
  longestRunMs(m: StoredMonitor): number {
    const { timeoutMs, attemptsMax } = this.limits(this.deps.types.get(m.type)!, this.deps.monitors.plainConfig(m));
    return attemptsMax * (timeoutMs + GRACE_MS);
  }

  async run(m: StoredMonitor, fence?: RunFence): Promise<RunResult> {
    const type = this.deps.types.get(m.type)!;
    const config = this.deps.monitors.plainConfig(m);
    const { timeoutMs, attemptsMax } = this.limits(type, config);
    const ts = this.now();
    let result: CheckResult = { outcome: 'exception', responseTimeMs: 0, message: 'not run' };
    let attempts = 0;
    while (attempts < attemptsMax) {
      attempts++;
      result = await this.attempt(type, config, timeoutMs, ts);
      if (result.outcome === 'up') break;
    }
    const thresholds = this.thresholdsFor(m);
    let status = classify(result, thresholds);
    const downtime = this.deps.inDowntime?.(m, ts) ?? false;
    if (downtime) status = 'DOWNTIME';
    const bounded = boundResult(result.message, result.details);
    const r: RunResult = {
      name: m.name,
      type: m.type,
      ts,
      status,
      responseTimeMs: Math.round(result.responseTimeMs * 1000) / 1000,
      outcome: result.outcome,
      attempts,
      message: bounded.message,
      metrics: result.metrics,
      details: bounded.details,
      thresholds,
      downtime,
    };
    if (fence === undefined) {
      this.deps.sinks.record(m, r);
      return r;
    }
    // Set on the result, not spread into a copy: a member records every run it makes under a lease.
    r.epoch = fence.epoch;
    if (fence.holds()) this.deps.sinks.record(m, r);
    else r.fenced = true;
    return r;
  }

  private async attempt(type: MonitorType, config: MonitorConfig, timeoutMs: number, ts: number): Promise<CheckResult> {
    const ac = new AbortController();
    const start = this.now();
    const ctx = new AttemptContext(
      ac.signal,
      start,
      timeoutMs,
      this.now,
      this.deps,
      this.deps.policy(),
      config.name,
      type.id,
      ts,
    );
    let timer: NodeJS.Timeout | undefined;
    let hardTimer: NodeJS.Timeout | undefined;
    try {
      const batcher = this.batchers.get(type.id);
      const check = batcher ? batcher.check(config, ctx) : type.check(config, ctx);
      return await new Promise<CheckResult>((resolve, reject) => {
        // One timer per run: at the deadline it aborts the check and only then arms the cut-off, GRACE_MS later.
        timer = setTimeout(() => {
          ac.abort(new Error(`timeout after ${timeoutMs} ms`));
          hardTimer = setTimeout(
            () =>
              resolve({
                outcome: 'down',
                responseTimeMs: this.now() - start,
                message: `timeout after ${timeoutMs} ms (check did not stop)`,
              }),
            GRACE_MS,
          );
        }, timeoutMs);
        check.then(resolve, reject);
      });
    } catch (e) {
      ctx.log.error({ err: e }, 'check threw');
      return {
        outcome: 'exception',
        responseTimeMs: this.now() - start,
        message: `internal check error: ${(e as Error)?.message ?? e}`,
      };
    } finally {
      clearTimeout(timer);
      clearTimeout(hardTimer);
      // Whatever still listens (work a check left running) is told to stop; with no listener there is nothing to tell.
      if (!ac.signal.aborted && getEventListeners(ac.signal, 'abort').length > 0) ac.abort(CHECK_FINISHED);
    }
  }
}

/** A run's CheckContext: a class so that its lazily made logger and artifact path cost no per-run accessor setup. */
class AttemptContext implements CheckContext {
  readonly deadlineMs: number;
  readonly secrets: CheckContext['secrets'];
  readonly settings: CheckContext['settings'];
  private logger: Logger | undefined;
  private dir: string | undefined;

  constructor(
    readonly signal: AbortSignal,
    startMs: number,
    readonly timeoutMs: number,
    readonly now: () => number,
    private readonly deps: Pick<RunDeps, 'log' | 'artifactRoot' | 'secrets' | 'settings'>,
    readonly policy: NetworkPolicy,
    private readonly monitorName: string,
    private readonly typeId: DbName,
    private readonly ts: number,
  ) {
    this.deadlineMs = startMs + timeoutMs;
    this.secrets = deps.secrets;
    this.settings = deps.settings;
  }

  get log(): Logger {
    return (this.logger ??= this.deps.log.child({ monitor: this.monitorName, type: this.typeId }));
  }

  get artifactDir(): string {
    return (this.dir ??= path.join(this.deps.artifactRoot, this.monitorName, String(this.ts)));
  }
}

/** `hide` output of /monitor/run: status and response time only. */
export function minimalResult(r: RunResult): Pick<RunResult, 'name' | 'status' | 'responseTimeMs' | 'ts'> {
  return { name: r.name, status: r.status, responseTimeMs: r.responseTimeMs, ts: r.ts };
}
