/**
 * Per-monitor gauges on /api/metrics, computed at scrape time from the latest results (nothing kept per series):
 * sentinel_monitor_status (0 OK … 7 DOWNTIME, the index in the status list, plus a `status` label),
 * sentinel_monitor_response_time_ms, sentinel_monitor_cert_days_left (https url/api monitors) and the effective
 * thresholds, labelled with name, type, probe and location. Scheduler figures: lateness and queue.
 */
import { Gauge, type Registry } from 'prom-client';
import { STATUSES } from '../monitor-types/types.js';
import type { MonitorsService } from './monitors.service.js';
import type { LastResults } from './last-results.js';
import type { Engine } from './engine.js';
import type { RunService } from './run.service.js';

const LABELS = ['name', 'type', 'probe', 'location'] as const;

export function registerMonitorMetrics(
  registry: Registry,
  deps: { monitors: MonitorsService; last: LastResults; engine: Engine; runner: RunService },
): void {
  const { monitors, last } = deps;
  const labels = (m: { name: string; type: string; config: Record<string, string> }) => ({
    name: m.name,
    type: m.type,
    probe: m.config.probe ?? '',
    location: m.config.location ?? '',
  });
  new Gauge({
    name: 'sentinel_monitor_status',
    help: `last status as its index in ${STATUSES.join(',')}`,
    labelNames: [...LABELS, 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const m of monitors.repo.all()) {
        const l = last.get(m.name);
        if (l) this.set({ ...labels(m), status: l.status }, STATUSES.indexOf(l.status));
      }
    },
  });
  new Gauge({
    name: 'sentinel_monitor_response_time_ms',
    help: 'response time of the last run, ms',
    labelNames: [...LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const m of monitors.repo.all()) {
        const l = last.get(m.name);
        if (l) this.set(labels(m), l.responseTimeMs);
      }
    },
  });
  new Gauge({
    name: 'sentinel_monitor_cert_days_left',
    help: 'days until the TLS certificate of the target expires',
    labelNames: [...LABELS],
    registers: [registry],
    collect() {
      this.reset();
      for (const m of monitors.repo.all()) {
        const d = last.get(m.name)?.certDaysLeft;
        if (d !== undefined) this.set(labels(m), d);
      }
    },
  });
  new Gauge({
    name: 'sentinel_monitor_threshold',
    help: 'effective thresholds (fixed or automatic)',
    labelNames: [...LABELS, 'level', 'source'],
    registers: [registry],
    collect() {
      this.reset();
      for (const m of monitors.repo.all()) {
        const t = deps.runner.thresholdsFor(m);
        for (const [level, v] of [
          ['minor', t.threshMin],
          ['major', t.threshMaj],
          ['critical', t.threshCri],
        ] as const) {
          if (v !== undefined) this.set({ ...labels(m), level, source: t.source }, v);
        }
      }
    },
  });
  new Gauge({
    name: 'sentinel_scheduler_lateness_p99_ms',
    help: 'start lateness p99 since start',
    registers: [registry],
    collect() {
      this.set(deps.engine.scheduler.stats().lateness.p99Ms ?? 0);
    },
  });
  new Gauge({
    name: 'sentinel_scheduler_queued',
    help: 'runs waiting for a concurrency slot',
    registers: [registry],
    collect() {
      this.set(deps.engine.scheduler.stats().queued);
    },
  });
}
