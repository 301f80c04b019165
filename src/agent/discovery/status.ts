/**
 * The STATUS bucket: one entry per metric key, { key, group, status, value, thresholds, sinceMs, updatedMs, reason }.
 * `sinceMs` is when the current status began; it stays while the status holds. Each change is also appended to
 * STATUS_HISTORY under [key, timeMs] and returned so the caller alerts once per change (never again while it holds).
 * A key not observed any more (a process or port removed from the watch list, a group disabled) is removed.
 * A key seen for the first time counts as a change only when it is not OK.
 */
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';
import type { Settings } from '../settings.js';
import { levelOf, thresholdsFor, type Baseline, type Level, type Thresholds } from './thresholds.js';
import type { Observation } from './watch.js';

export interface StatusEntry {
  key: string;
  group: string;
  status: Level;
  value: number | null;
  thresholds: Thresholds;
  sinceMs: number;
  updatedMs: number;
  reason?: string;
}

export interface StatusChange {
  key: string;
  from: Level | null;
  to: Level;
  value: number | null;
  reason?: string;
  atMs: number;
}

export function evaluate(
  o: Observation,
  settings: Settings,
  baseline: Baseline | undefined,
): { status: Level; thresholds: Thresholds; reason?: string } {
  const thresholds = thresholdsFor(settings, o.group, baseline);
  if (o.forced) return { status: o.forced.status, thresholds, reason: o.forced.reason };
  const status = o.value === null ? 'OK' : levelOf(o.value, thresholds);
  const reason = status === 'OK' ? undefined : `${o.key} = ${o.value} ≥ ${status} threshold (${thresholds.source})`;
  return { status, thresholds, reason };
}

export class StatusBook {
  private current = new Map<string, StatusEntry>();
  private baselines = new Map<string, Baseline>();

  constructor(private readonly store: KvStore) {}

  /** Reads STATUS and THRESHOLDS into memory (at start, after a reinit, after /computeThreshold). */
  async load(): Promise<void> {
    const current = new Map<string, StatusEntry>();
    for await (const { value } of this.store.bucket('STATUS').range<StatusEntry>()) current.set(value.key, value);
    this.current = current;
    await this.reloadBaselines();
  }

  /** Re-reads THRESHOLDS only (after /computeThreshold); the maps are swapped whole, never seen half-filled. */
  async reloadBaselines(): Promise<void> {
    const baselines = new Map<string, Baseline>();
    for await (const { key, value } of this.store.bucket('THRESHOLDS').range<Baseline>())
      baselines.set(String(key), value);
    this.baselines = baselines;
  }

  get(key: string): StatusEntry | undefined {
    return this.current.get(key);
  }

  all(): StatusEntry[] {
    return [...this.current.values()];
  }

  /** Applies one cycle's observations; writes STATUS (+ history) in one batch; resolves the changes. */
  async apply(obs: Observation[], settings: Settings, nowMs: number): Promise<StatusChange[]> {
    const ops: BatchOp[] = [];
    const changes: StatusChange[] = [];
    const seen = new Set<string>();
    for (const o of obs) {
      if (settings[`disco${o.group}GMonEnabled`] === 'false') continue;
      seen.add(o.key);
      const prev = this.current.get(o.key);
      const { status, thresholds, reason } = evaluate(o, settings, this.baselines.get(o.key));
      const changed = prev ? prev.status !== status : status !== 'OK';
      const entry: StatusEntry = {
        key: o.key,
        group: o.group,
        status,
        value: o.value,
        thresholds,
        sinceMs: prev && prev.status === status ? prev.sinceMs : nowMs,
        updatedMs: nowMs,
        reason,
      };
      this.current.set(o.key, entry);
      ops.push({ type: 'put', bucket: 'STATUS', key: o.key, value: entry });
      if (changed) {
        const c: StatusChange = {
          key: o.key,
          from: prev?.status ?? null,
          to: status,
          value: o.value,
          reason,
          atMs: nowMs,
        };
        changes.push(c);
        ops.push({ type: 'put', bucket: 'STATUS_HISTORY', key: [o.key, nowMs], value: c });
      }
    }
    for (const k of [...this.current.keys()]) {
      if (seen.has(k)) continue;
      this.current.delete(k);
      ops.push({ type: 'delete', bucket: 'STATUS', key: k });
    }
    if (ops.length) await this.store.batch(ops);
    return changes;
  }
}
