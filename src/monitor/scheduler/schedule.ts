/**
 * Schedules: the spec's presets (1MIN…60MIN) and 5-field cron expressions (`schedCron` overrides `sched`), plus each
 * monitor's stable start offset: a preset's starts are spread over the first part of its interval; an explicit cron
 * runs at its time plus a small jitter (at most `cronJitterMs`, default 5 s) so many monitors on `0 * * * *` do not
 * all start in the same millisecond.
 *
 * Times are Unix ms. Cron fields are read in UTC unless a timezone is given. In UTC the presets are computed
 * arithmetically (Unix time is aligned on UTC hours); everything else goes through croner, whose answers are memoised
 * per spec object (all monitors sharing an expression share one spec inside the scheduler, so computing the next fire
 * for 50,000 monitors costs one croner call per distinct expression per fire time).
 */
import { Cron } from 'croner';
import { AppError } from '../../core/errors.js';
import { MINUTE_MS } from '../../core/time.js';

/** The spec's schedule identifiers and their cron expressions. */
export const SCHEDULE_PRESETS: Readonly<Record<string, string>> = {
  '1MIN': '* * * * *',
  '5MIN': '*/5 * * * *',
  '10MIN': '*/10 * * * *',
  '20MIN': '*/20 * * * *',
  '30MIN': '*/30 * * * *',
  '60MIN': '0 * * * *',
};

const PRESET_PERIOD_MIN: Readonly<Record<string, number>> = {
  '1MIN': 1,
  '5MIN': 5,
  '10MIN': 10,
  '20MIN': 20,
  '30MIN': 30,
  '60MIN': 60,
};

export interface ScheduleSpec {
  /** Identity of the schedule: same key ⇒ same fire times and the same offset rule (specs are shared by key). */
  readonly key: string;
  /** The sched identifier given (e.g. "5MIN"); for a schedCron override still the sched given. */
  readonly sched: string;
  /** The effective 5-field cron expression. */
  readonly cron: string;
  /** True when schedCron overrode the preset. */
  readonly custom: boolean;
  readonly timezone: string;
  /** Shortest gap between two consecutive fires (sampled), the "interval" the spread is a fraction of. */
  readonly minIntervalMs: number;
  /** The first fire time strictly after `afterMs`, or null when the expression never fires again. */
  nextFireAfter(afterMs: number): number | null;
}

export interface ParseScheduleOptions {
  /** IANA timezone the cron fields are read in; default "UTC". */
  timezone?: string;
}

/**
 * Parses a monitor's schedule. `schedCron`, when non-empty, overrides `sched`. Throws AppError VALIDATION (400) naming
 * `schedCron` for a bad expression (wrong field count, out-of-range value, never fires) and `sched` for an unknown
 * identifier without a schedCron.
 */
export function parseSchedule(sched: string, schedCron?: string, opts: ParseScheduleOptions = {}): ScheduleSpec {
  const timezone = opts.timezone ?? 'UTC';
  const custom = typeof schedCron === 'string' && schedCron.trim() !== '';
  if (custom) return cronSpec(sched, normaliseCron(schedCron), true, timezone);
  const preset = SCHEDULE_PRESETS[sched];
  if (preset === undefined) {
    throw AppError.badRequest(
      `unknown sched "${String(sched).slice(0, 40)}": use one of ${Object.keys(SCHEDULE_PRESETS).join(', ')} or give schedCron`,
      'sched',
    );
  }
  if (timezone === 'UTC') return presetSpec(sched, preset, PRESET_PERIOD_MIN[sched]! * MINUTE_MS);
  return cronSpec(sched, preset, false, timezone);
}

/** True when `sched` is one of the spec's identifiers. */
export function isSchedulePreset(sched: string): boolean {
  return Object.prototype.hasOwnProperty.call(SCHEDULE_PRESETS, sched);
}

function normaliseCron(expr: string): string {
  return expr.trim().split(/\s+/).join(' ');
}

function presetSpec(sched: string, cron: string, periodMs: number): ScheduleSpec {
  return {
    key: `preset|${cron}|UTC`,
    sched,
    cron,
    custom: false,
    timezone: 'UTC',
    minIntervalMs: periodMs,
    nextFireAfter: (afterMs) => (Math.floor(afterMs / periodMs) + 1) * periodMs,
  };
}

function cronSpec(sched: string, cron: string, custom: boolean, timezone: string): ScheduleSpec {
  const field = custom ? 'schedCron' : 'sched';
  let job: Cron;
  try {
    job = new Cron(cron, { paused: true, mode: '5-part', ...(timezone === 'UTC' ? { utcOffset: 0 } : { timezone }) });
  } catch (e) {
    const reason = e instanceof Error ? e.message.replace(/^CronPattern:\s*/, '') : 'invalid';
    throw AppError.badRequest(`invalid cron expression "${cron.slice(0, 80)}": ${reason.slice(0, 160)}`, field);
  }
  let memoAfter = Number.NaN;
  let memoNext: number | null = null;
  const nextFireAfter = (afterMs: number): number | null => {
    if (afterMs === memoAfter) return memoNext;
    const next = job.nextRun(new Date(afterMs));
    memoAfter = afterMs;
    memoNext = next === null ? null : next.getTime();
    return memoNext;
  };
  const minIntervalMs = sampleMinInterval(job);
  if (minIntervalMs === null) throw AppError.badRequest(`cron expression "${cron.slice(0, 80)}" never fires`, field);
  const key = `${custom ? 'cron' : 'preset'}|${cron}|${timezone}`;
  return { key, sched, cron, custom, timezone, minIntervalMs, nextFireAfter };
}

/** A fixed reference so the sampled interval (and so every offset) is the same on every run. */
const SAMPLE_FROM_MS = Date.UTC(2024, 0, 1);
const SAMPLE_FIRES = 48;

function sampleMinInterval(job: Cron): number | null {
  const fires = job.nextRuns(SAMPLE_FIRES, new Date(SAMPLE_FROM_MS));
  if (fires.length === 0) return null;
  if (fires.length === 1) return 365 * 24 * 60 * MINUTE_MS;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 1; i < fires.length; i++) min = Math.min(min, fires[i]!.getTime() - fires[i - 1]!.getTime());
  return Math.max(MINUTE_MS, min);
}

export interface SpreadOptions {
  /** Fraction of the interval the starts are spread over; default 0.8 (docs/scheduling.md: why). 0 = no offsets. */
  spreadFraction?: number;
  /** Upper bound of a preset's spread window; default 300,000 ms (5 min). */
  maxSpreadMs?: number;
  /** Upper bound of an explicit cron's jitter; default 5,000 ms. */
  cronJitterMs?: number;
}

export const DEFAULT_SPREAD_FRACTION = 0.8;
export const DEFAULT_MAX_SPREAD_MS = 300_000;
export const DEFAULT_CRON_JITTER_MS = 5_000;

/**
 * The window a spec's starts are spread over: for a preset min(spreadFraction × interval, maxSpreadMs); for an
 * explicit cron (schedCron) min(spreadFraction × interval, cronJitterMs), so it runs at its time within a few seconds.
 */
export function spreadWindowMs(spec: ScheduleSpec, opts: SpreadOptions = {}): number {
  const fraction = Math.min(1, Math.max(0, opts.spreadFraction ?? DEFAULT_SPREAD_FRACTION));
  const cap = spec.custom
    ? Math.max(0, opts.cronJitterMs ?? DEFAULT_CRON_JITTER_MS)
    : Math.max(0, opts.maxSpreadMs ?? DEFAULT_MAX_SPREAD_MS);
  return Math.floor(Math.min(spec.minIntervalMs * fraction, cap));
}

/** Stable start offset of a monitor: hash(id) mod spreadWindowMs (0 when the window is 0). */
export function computeOffsetMs(id: string, spec: ScheduleSpec, opts: SpreadOptions = {}): number {
  const window = spreadWindowMs(spec, opts);
  return window <= 0 ? 0 : hashId(id) % window;
}

/** FNV-1a over UTF-16 code units followed by a murmur3 finaliser: a stable, well-mixed unsigned 32-bit hash. */
export function hashId(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
