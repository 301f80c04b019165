/**
 * ping: ICMP echo through Debian's fping (ping/fping have cap_net_raw; unprivileged ICMP sockets are off here).
 * Three echoes per check; figures min/avg/max latency (ms) and loss %. Many due ping monitors share one fping
 * process through `checkBatch` (chunks of 256 targets, at most 4 processes at a time).
 *
 * Outcomes: all echoes lost, or the name does not resolve → down. Otherwise up; partial loss raises a level the
 * type judges itself: loss ≥ 50 % → MAJOR, any loss below that → MINOR. Thresholds apply to the average latency
 * (thresholdValue = avgMs; responseTimeMs = avgMs too, the wall time when down).
 */
import { Type } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { isPolicyError, resolveChecked } from './lib/network-policy.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType, Severity } from './types.js';
import { isPingTarget, runFpingChunked, type FpingOptions, type FpingRun, type PingStats } from './lib/fping-batch.js';

export const PING_COUNT = 3;

export interface PingTypeOptions {
  /** argv prefix that runs fping (default ['fping']). */
  command?: readonly string[];
  count?: number;
  /** Targets per fping process. */
  chunkSize?: number;
  /** fping processes at a time. */
  parallel?: number;
}

/** Spreads the monitor's timeout over the echoes: per-echo timeout ≤ 1 s, period between echoes ≤ 1 s. */
export function fpingTiming(timeoutMs: number, count: number, targets: number): Omit<FpingOptions, 'signal'> {
  const budget = Math.max(100, timeoutMs - 100);
  const perPingTimeoutMs = clamp(Math.floor(budget / 4), 50, 1000);
  const intervalMs = 1;
  const sendSpanMs = targets * intervalMs;
  const periodMs = clamp(Math.floor((budget - perPingTimeoutMs - sendSpanMs) / Math.max(1, count)), 20, 1000);
  return { count, perPingTimeoutMs, periodMs, intervalMs };
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}

export function lossSeverity(lossPct: number): Severity | undefined {
  if (lossPct >= 50) return 'MAJOR';
  if (lossPct > 0) return 'MINOR';
  return undefined;
}

/** Turns one target's stats (or their absence) into a CheckResult. */
export function pingResult(target: string, s: PingStats | undefined, run: FpingRun, wallMs: number): CheckResult {
  if (!s) {
    const note = run.notes.find((n) => n.startsWith(`${target}:`) || n.startsWith(`${target} `));
    const message = run.aborted
      ? `no reply from ${target} before the timeout`
      : (note ?? `fping gave no result for ${target}`);
    return { outcome: 'down', responseTimeMs: wallMs, message, metrics: { lossPct: 100 } };
  }
  const metrics: Record<string, number> = { lossPct: s.lossPct, sent: s.sent, received: s.received };
  if (s.received === 0) {
    return { outcome: 'down', responseTimeMs: wallMs, message: `100% packet loss to ${target}`, metrics };
  }
  metrics.minMs = s.minMs!;
  metrics.avgMs = s.avgMs!;
  metrics.maxMs = s.maxMs!;
  const severity = lossSeverity(s.lossPct);
  return {
    outcome: 'up',
    responseTimeMs: s.avgMs!,
    thresholdValue: s.avgMs!,
    ...(severity ? { severity } : {}),
    message: `${target}: ${s.received}/${s.sent} replies, ${s.lossPct}% loss, min/avg/max ${s.minMs}/${s.avgMs}/${s.maxMs} ms`,
    metrics,
    details: { rttsMs: s.rttsMs },
  };
}

function findStats(run: FpingRun, target: string): PingStats | undefined {
  return run.stats.get(target) ?? run.stats.get(target.toLowerCase()) ?? run.stats.get(target.replace(/\.$/, ''));
}

type Resolved = { address: string } | { failure: CheckResult };

async function resolveForPing(ctx: CheckContext, host: string): Promise<Resolved> {
  try {
    return { address: (await resolveChecked(ctx.policy, host)).address };
  } catch (e) {
    const message = (e as Error).message;
    return { failure: { outcome: isPolicyError(e) ? 'exception' : 'down', responseTimeMs: 0, message } };
  }
}

export function createPingType(opts: PingTypeOptions = {}): MonitorType {
  const count = opts.count ?? PING_COUNT;
  const checkBatch = async (configs: MonitorConfig[], ctx: CheckContext): Promise<CheckResult[]> => {
    const startMs = ctx.now();
    const valid = configs.map((c) => typeof c.ip === 'string' && isPingTarget(c.ip.trim()));
    // The network policy: each host is resolved and checked here and fping is given the checked address.
    const memo = new Map<string, Promise<Resolved>>();
    const resolved = await Promise.all(
      configs.map(async (c, i) => {
        if (!valid[i]) return undefined;
        const host = c.ip!.trim();
        let p = memo.get(host);
        if (!p) memo.set(host, (p = resolveForPing(ctx, host)));
        return p;
      }),
    );
    const targets = resolved.flatMap((r) => (r && 'address' in r ? [r.address] : []));
    const timing = fpingTiming(ctx.timeoutMs, count, Math.min(targets.length, opts.chunkSize ?? 256));
    const run: FpingRun =
      targets.length === 0
        ? { stats: new Map(), notes: [], exitCode: 0, aborted: false }
        : await runFpingChunked(
            targets,
            { ...timing, command: opts.command, signal: ctx.signal },
            opts.chunkSize,
            opts.parallel,
          );
    const wallMs = ctx.now() - startMs;
    if (run.notes.some((n) => n.startsWith('cannot run fping'))) {
      const message = run.notes.find((n) => n.startsWith('cannot run fping'))!;
      return configs.map(() => ({ outcome: 'exception' as const, responseTimeMs: wallMs, message }));
    }
    return configs.map((c, i) => {
      if (!valid[i]) {
        return {
          outcome: 'exception' as const,
          responseTimeMs: 0,
          message: `invalid ping target '${String(c.ip).slice(0, 100)}'`,
        };
      }
      const r = resolved[i]!;
      if ('failure' in r) return { ...r.failure, responseTimeMs: wallMs };
      const host = c.ip!.trim();
      const result = pingResult(r.address, findStats(run, r.address), run, wallMs);
      return host === r.address ? result : { ...result, message: `${host}: ${result.message}` };
    });
  };
  return {
    id: 'ping',
    fields: Type.Object({
      ip: Type.String({ description: 'Host to ping: IPv4 or IPv6 address, or a hostname' }),
    }),
    required: ['ip'],
    secretFields: [],
    validate(config: MonitorConfig): void {
      const ip = config.ip?.trim();
      if (!ip) throw AppError.badRequest('ip is required', 'ip');
      if (!isPingTarget(ip)) throw AppError.badRequest('ip must be an IPv4/IPv6 address or a hostname', 'ip');
    },
    async check(config: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
      const [r] = await checkBatch([config], ctx);
      return r!;
    },
    checkBatch,
  };
}

export const pingType: MonitorType = createPingType();
export default pingType;
