/**
 * Maintenance windows (bucket 'maintenance'): one-off `{ name, from, to }` (Unix ms, `to` exclusive) or recurring
 * `{ name, cron, durationMinutes, timezone? }` (each cron occurrence opens a window of that length; croner syntax, 5
 * or 6 fields, the server's local time unless `timezone` is given). Scope: `monitors` (comma list of monitor names,
 * '*' = every monitor) and/or `tags` (comma list, "[a,b]" accepted); a monitor is in scope when its name is listed or
 * it carries one of the tags.
 *
 * `isInWindow` is synchronous and cheap enough for every run: windows are held in memory, and each recurring window
 * caches its current answer until the instant it can next change (the window's end or the next occurrence), so croner
 * is consulted about once per occurrence.
 */
import { randomUUID } from 'node:crypto';
import { Cron } from 'croner';
import { AppError } from '../../core/errors.js';
import type { KvStore } from '../../core/storage/kv-store.js';

export const MAINTENANCE_BUCKET = 'maintenance';
const MAX_DURATION_MINUTES = 31 * 24 * 60;

export interface MaintenanceWindow {
  id: string;
  name: string;
  fromMs?: number;
  toMs?: number;
  cron?: string;
  durationMinutes?: number;
  timezone?: string;
  /** Monitor names; ['*'] = all monitors. */
  monitors: string[];
  tags: string[];
  createdMs: number;
}

/** The create body, string-valued as the spec's bodies. */
export interface MaintenanceInput {
  name?: string;
  from?: string;
  to?: string;
  cron?: string;
  durationMinutes?: string;
  timezone?: string;
  monitors?: string;
  tags?: string;
}

export interface MaintenanceView extends MaintenanceWindow {
  active: boolean;
  /** End of the current occurrence when active, else the next start (absent when none will come). */
  nextChangeMs?: number;
}

export interface MonitorScope {
  name: string;
  tags?: string | string[];
}

interface Compiled {
  w: MaintenanceWindow;
  monitors: Set<string>;
  all: boolean;
  tags: Set<string>;
  cron?: Cron;
  cache?: { inWindow: boolean; untilMs: number; fromMs: number };
}

export function parseList(v: string | string[] | undefined): string[] {
  if (Array.isArray(v)) return v.map((s) => s.trim()).filter(Boolean);
  return (v ?? '')
    .replace(/^\s*\[|\]\s*$/g, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseMs(v: string | undefined, field: string): number {
  if (v === undefined || !/^\d{1,15}$/.test(v.trim()))
    throw AppError.badRequest(`${field} must be Unix milliseconds`, field);
  return Number(v);
}

/** Validates a create body into a window; throws AppError VALIDATION naming the field. */
export function validateWindow(input: MaintenanceInput, nowMs: number): MaintenanceWindow {
  const name = (input.name ?? '').trim();
  if (!name || name.length > 100) throw AppError.badRequest('name is required (1-100 characters)', 'name');
  const monitors = parseList(input.monitors);
  const tags = parseList(input.tags);
  if (monitors.length === 0 && tags.length === 0)
    throw AppError.badRequest("give monitors (names, or '*') and/or tags", 'monitors');
  const base = { id: randomUUID(), name, monitors, tags, createdMs: nowMs };
  const oneOff = input.from !== undefined || input.to !== undefined;
  if (oneOff && input.cron !== undefined)
    throw AppError.badRequest('give either from/to or cron/durationMinutes', 'cron');
  if (oneOff) {
    const fromMs = parseMs(input.from, 'from');
    const toMs = parseMs(input.to, 'to');
    if (toMs <= fromMs) throw AppError.badRequest('to must be after from', 'to');
    return { ...base, fromMs, toMs };
  }
  if (!input.cron) throw AppError.badRequest('give from/to (one-off) or cron/durationMinutes (recurring)', 'cron');
  const d = Number(input.durationMinutes);
  if (!/^\d+$/.test(input.durationMinutes ?? '') || d < 1 || d > MAX_DURATION_MINUTES) {
    throw AppError.badRequest(`durationMinutes must be 1-${MAX_DURATION_MINUTES}`, 'durationMinutes');
  }
  const timezone = input.timezone?.trim() || undefined;
  if (timezone) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: timezone });
    } catch {
      throw AppError.badRequest('timezone is not a known IANA time zone', 'timezone');
    }
  }
  const w: MaintenanceWindow = {
    ...base,
    cron: input.cron.trim(),
    durationMinutes: d,
    ...(timezone ? { timezone } : {}),
  };
  let next: Date | null;
  try {
    next = compileCron(w).nextRun();
  } catch (err) {
    throw AppError.badRequest(`cron is invalid: ${(err as Error).message}`, 'cron');
  }
  if (!next) throw AppError.badRequest('cron never fires', 'cron');
  return w;
}

function compileCron(w: MaintenanceWindow): Cron {
  return new Cron(w.cron!, { paused: true, ...(w.timezone ? { timezone: w.timezone } : {}) });
}

function compile(w: MaintenanceWindow): Compiled {
  return {
    w,
    monitors: new Set(w.monitors),
    all: w.monitors.includes('*'),
    tags: new Set(w.tags),
    cron: w.cron ? compileCron(w) : undefined,
  };
}

/** Current state of a recurring window at `nowMs` and until when it holds. */
function recurringState(c: Compiled, nowMs: number): { inWindow: boolean; untilMs: number } {
  const durMs = c.w.durationMinutes! * 60_000;
  const start = c.cron!.nextRun(new Date(nowMs - durMs));
  if (!start) return { inWindow: false, untilMs: Infinity };
  const startMs = start.getTime();
  if (startMs > nowMs) return { inWindow: false, untilMs: startMs };
  // Occurrences may overlap (duration longer than the period): extend the end across them (bounded).
  let endMs = startMs + durMs;
  for (let i = 0, n = c.cron!.nextRun(start); n && n.getTime() <= endMs && i < 1000; i++, n = c.cron!.nextRun(n)) {
    endMs = Math.max(endMs, n.getTime() + durMs);
  }
  return { inWindow: true, untilMs: endMs };
}

function activeAt(c: Compiled, nowMs: number): { inWindow: boolean; untilMs?: number } {
  const w = c.w;
  if (w.fromMs !== undefined && w.toMs !== undefined) {
    if (nowMs < w.fromMs) return { inWindow: false, untilMs: w.fromMs };
    return nowMs < w.toMs ? { inWindow: true, untilMs: w.toMs } : { inWindow: false };
  }
  const k = c.cache;
  if (k && nowMs >= k.fromMs && nowMs < k.untilMs) return k;
  const s = recurringState(c, nowMs);
  c.cache = { ...s, fromMs: nowMs };
  return s;
}

function inScope(c: Compiled, m: MonitorScope): boolean {
  if (c.all || c.monitors.has(m.name)) return true;
  if (c.tags.size === 0) return false;
  return parseList(m.tags).some((t) => c.tags.has(t));
}

export interface Maintenance {
  load(): Promise<void>;
  list(nowMs?: number): MaintenanceView[];
  create(input: MaintenanceInput): Promise<MaintenanceView>;
  remove(id: string): Promise<boolean>;
  isInWindow(monitor: MonitorScope, nowMs: number): boolean;
}

export function createMaintenance(deps: { store: KvStore; now?: () => number }): Maintenance {
  const now = deps.now ?? Date.now;
  const bucket = deps.store.bucket(MAINTENANCE_BUCKET);
  const windows = new Map<string, Compiled>();
  const loadAll = async (): Promise<void> => {
    const next: Compiled[] = [];
    for await (const e of bucket.range<MaintenanceWindow>()) next.push(compile(e.value));
    windows.clear();
    for (const c of next) windows.set(c.w.id, c);
  };
  // Windows another instance creates or removes (a cluster: docs/cluster.md).
  deps.store.watch(MAINTENANCE_BUCKET, async (k) => {
    if (k === undefined) return loadAll();
    const w = await bucket.get<MaintenanceWindow>(k);
    if (w) windows.set(w.id, compile(w));
    else windows.delete(String(k));
  });
  const view = (c: Compiled, t: number): MaintenanceView => {
    const a = activeAt(c, t);
    return {
      ...c.w,
      active: a.inWindow,
      ...(a.untilMs !== undefined && Number.isFinite(a.untilMs) ? { nextChangeMs: a.untilMs } : {}),
    };
  };
  return {
    load: loadAll,
    list(t = now()) {
      return [...windows.values()].sort((a, b) => a.w.createdMs - b.w.createdMs).map((c) => view(c, t));
    },
    async create(input) {
      const w = validateWindow(input, now());
      await bucket.put(w.id, w);
      const c = compile(w);
      windows.set(w.id, c);
      return view(c, now());
    },
    async remove(id) {
      const had = windows.delete(id);
      const deleted = await bucket.delete(id);
      return had || deleted;
    },
    isInWindow(monitor, nowMs) {
      for (const c of windows.values()) {
        if (inScope(c, monitor) && activeAt(c, nowMs).inWindow) return true;
      }
      return false;
    },
  };
}
