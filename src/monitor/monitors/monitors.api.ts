/**
 * What the monitor routes call: one method per endpoint, combining definitions (MonitorsService), the engine
 * (schedule, run now), the latest results and history.
 */
import type { DbName } from '../monitor-types/types.js';
import type { Actor, MonitorsService } from './monitors.service.js';
import type { Engine } from './engine.js';
import type { LastResults } from './last-results.js';
import { minimalResult, type RunService } from './run.service.js';
import type { StoredMonitor } from './monitors.repo.js';
import { alertWarnings } from './common-fields.js';
import { originFields, type ResultOrigin } from '../history/origins.js';

export interface HistoryPort {
  recent(dbname: DbName, name: string, n: number): Promise<unknown[]>;
  deleteMonitor(dbname: DbName, name: string): Promise<void>;
  /** Where this instance's runs are recorded as coming from (history/origins.ts). */
  readonly selfOrigin?: ResultOrigin;
}

export class MonitorsApi {
  constructor(
    private readonly monitors: MonitorsService,
    private readonly engine: Engine,
    private readonly runner: RunService,
    private readonly last: LastResults,
    private readonly history?: HistoryPort,
    /** Service-level reasons a monitor's alerts cannot go out (SMTP not enabled), added to create/update answers. */
    private readonly serviceWarnings: (config: Record<string, string>) => string[] = () => [],
    /** What a plugin adds to a monitor's details (push: its ping paths and last ping), under its own key. */
    private readonly extraDetails: (m: StoredMonitor) => Record<string, unknown> = () => ({}),
  ) {}

  private ack(code: number, message: string, m?: StoredMonitor) {
    return m ? { code, message, monitor: this.monitors.view(m) } : { code, message };
  }

  /** A create/update answer; `warnings` says why the monitor, as saved, will send no alert it seems to ask for. */
  private saved(code: number, message: string, m: StoredMonitor) {
    const warnings = [...alertWarnings(m.config), ...this.serviceWarnings(m.config)];
    return warnings.length ? { ...this.ack(code, message, m), warnings } : this.ack(code, message, m);
  }

  /** The answer carries the generated secrets (push: the token) under `generated`: the only time they are shown. */
  async create(type: DbName, body: Record<string, string>, actor?: Actor) {
    const shown: Record<string, string> = {};
    const m = await this.monitors.create(type, body, actor, shown);
    const ack = this.saved(201, `${type} monitor ${m.name} created`, m);
    return Object.keys(shown).length ? { ...ack, generated: shown } : ack;
  }

  async rotate(type: DbName, sched: string, name: string, actor?: Actor) {
    const { monitor, shown } = await this.monitors.rotate(type, sched, name, actor);
    const ack = this.ack(200, `${type} monitor ${name}: ${Object.keys(shown).join(', ')} rotated`, monitor);
    return { ...ack, generated: shown };
  }

  async update(type: DbName, sched: string, name: string, body: Record<string, string>, actor?: Actor) {
    const m = await this.monitors.update(type, sched, name, body, actor);
    return this.saved(200, `${type} monitor ${name} updated`, m);
  }

  /** GET /monitors as JSON text: each monitor's view is cached as JSON; only last, nextDueMs (and in a cluster
   * `unassigned: true` for a monitor no live instance may run) are added per call
   * (50,000 monitors answer in tens of milliseconds instead of serialising 50,000 objects field by field). */
  listJson(filter: { type?: string; state?: string; offset?: number; limit?: number }): {
    json: string;
    total: number;
  } {
    const parts: string[] = [];
    const all = this.monitors.list(filter);
    const start = filter.offset ?? 0;
    const page = all.slice(start, filter.limit === undefined ? undefined : start + filter.limit);
    for (const m of page) {
      const last = this.last.json(m.name);
      const next = this.engine.nextDueMs(m.name) ?? null;
      const un = this.engine.unassigned(m.name) ? ',"unassigned":true' : '';
      parts.push(
        `${this.monitors.viewPrefix(m)}${last === undefined ? '' : `,"last":${last}`},"nextDueMs":${next}${un}}`,
      );
    }
    return { json: `[${parts.join(',')}]`, total: all.length };
  }

  async details(type: DbName, name: string, sched: string) {
    const m = this.monitors.find(sched, name, type);
    const info = this.engine.scheduleInfo(name);
    return {
      monitor: this.monitors.view(m),
      schedule: info ?? null,
      thresholds: this.runner.thresholdsFor(m),
      last: this.last.get(name) ?? null,
      recent: this.history ? await this.history.recent(type, name, 20) : [],
      ...this.extraDetails(m),
    };
  }

  /**
   * Runs a monitor now. A monitor in state off runs too (a manual test; it still never runs on schedule): the answer
   * carries its `state`, and a `note` saying so when it is off. The result is recorded like a scheduled one. The full
   * answer names where it ran (probe, location, instance: this instance, the holder when forwarded in a cluster).
   */
  async runNow(name: string, full: boolean) {
    const r = await this.engine.runNow(name);
    const state = this.monitors.repo.get(name)?.config.state ?? 'on';
    const note = state === 'off' ? 'monitor is off: run by hand only, it does not run on schedule' : undefined;
    const result = full ? { ...r, ...originFields(this.history?.selfOrigin) } : minimalResult(r);
    return { ...result, state, ...(note ? { note } : {}) };
  }

  async setState(sched: string, name: string, state: 'on' | 'off', actor?: Actor) {
    const m = await this.monitors.setState(sched, name, state, actor);
    return this.ack(200, `monitor ${name} is ${state}`, m);
  }

  async remove(sched: string, name: string) {
    const m = await this.monitors.remove(sched, name);
    this.last.delete(name);
    await this.history?.deleteMonitor(m.type, name);
    return this.ack(200, `monitor ${name} deleted`);
  }
}
