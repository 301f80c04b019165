/**
 * Coalesces single checks of a type that has `checkBatch` (ping: one fping process for many targets). Checks that
 * arrive within `windowMs` of the first (or until `maxBatch`) run as one batch; each caller gets its own result.
 * The batch's signal aborts at the latest deadline of its members; each member's own deadline still bounds it in
 * the runner.
 */
import type { CheckContext, CheckResult, MonitorConfig, MonitorType } from '../monitor-types/types.js';

interface Pending {
  config: MonitorConfig;
  ctx: CheckContext;
  resolve(r: CheckResult): void;
  reject(e: unknown): void;
}

export class CheckBatcher {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly type: MonitorType,
    private readonly windowMs = 25,
    private readonly maxBatch = 1000,
  ) {}

  check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ config, ctx, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const last = batch.reduce((a, b) => (b.ctx.deadlineMs > a.ctx.deadlineMs ? b : a));
    const ac = new AbortController();
    let live = batch.length;
    for (const p of batch) {
      p.ctx.signal.addEventListener(
        'abort',
        () => {
          if (--live === 0) ac.abort(p.ctx.signal.reason);
        },
        { once: true },
      );
    }
    const base = last.ctx;
    // Not a spread: a context's log and artifactDir may be accessors (made on first use).
    const ctx: CheckContext = {
      signal: ac.signal,
      deadlineMs: base.deadlineMs,
      timeoutMs: base.timeoutMs,
      now: base.now,
      policy: base.policy,
      secrets: base.secrets,
      settings: base.settings,
      get log() {
        return base.log;
      },
      get artifactDir() {
        return base.artifactDir;
      },
    };
    this.type.checkBatch!(
      batch.map((p) => p.config),
      ctx,
    ).then(
      (results) =>
        batch.forEach((p, i) =>
          p.resolve(results[i] ?? { outcome: 'exception', responseTimeMs: 0, message: 'no result from batch' }),
        ),
      (e) => batch.forEach((p) => p.reject(e)),
    );
  }
}
