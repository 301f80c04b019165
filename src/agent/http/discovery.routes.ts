/** Discovery, process lookup, thresholds, current metrics and graphs. */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import { readLoad } from '../../core/system/load.js';
import { readMemory } from '../../core/system/memory.js';
import { readUptime } from '../../core/system/uptime.js';
import type { CpuSampler } from '../../core/system/cpu.js';
import type { Discovery } from '../discovery/cycle.js';
import type { Mutex } from '../discovery/lock.js';
import { parsePortParam, type PortOwner } from '../discovery/process-by-port.js';
import { graph, SYSTEM_GRAPH_KEYS } from '../discovery/series.js';
import type { StatusBook } from '../discovery/status.js';
import { computeAllBaselines, MIN_BASELINE_SAMPLES } from '../discovery/thresholds.js';
import { redactCommandLine } from '../discovery/redact-cmdline.js';
import type { SwapGate } from '../swap-gate.js';

import {
  DISCOVERY_RUN,
  errs,
  METRIC_GRAPH,
  METRICS_NOW,
  PORT_OWNER,
  sec,
  SYS_GRAPH,
  THRESHOLDS_RUN,
} from './schemas.js';

const Range = {
  startTime: Type.String({ pattern: '^[0-9]{1,16}$', description: 'Unix ms', example: '1700000000000' }),
  endTime: Type.String({ pattern: '^[0-9]{1,16}$', description: 'Unix ms', example: '4102444800000' }),
};

function range(p: { startTime: string; endTime: string }): [number, number] {
  const s = Number(p.startTime);
  const e = Number(p.endTime);
  if (e < s) throw AppError.badRequest('endTime must be ≥ startTime', 'params.endTime');
  return [s, e];
}

export function graphKeys(type: string, key: string): string[] {
  switch (type) {
    case 'process':
      return [`${key}_cpu`, `${key}_mem`, `${key}_count`];
    case 'system':
      return [key.startsWith('system_') ? key : `system_${key}`];
    case 'port':
      return [`port_${key}`, `port_${key}_listening`];
    case 'disk':
      return [key.startsWith('disk_') ? key : `disk_${key}`];
    case 'metric':
      return [key];
    default:
      throw AppError.badRequest('type must be process, system, port, disk or metric', 'params.type');
  }
}

export function registerDiscoveryRoutes(
  app: FastifyInstance,
  deps: {
    discovery: Discovery;
    lookup: (port: number) => PortOwner;
    store: KvStore;
    status: StatusBook;
    mutex: Mutex;
    /** Graph reads wait while /reinitDatabase drops the buckets they read. */
    gate: SwapGate;
    cpu: CpuSampler;
    now?: () => number;
  },
): void {
  const tags = ['discovery'];
  const now = deps.now ?? Date.now;
  app.get(
    '/runDiscovery',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary:
          'Run a discovery cycle now (a call during a running cycle joins it); results in the store and data/discover_metrics.json',
        security: sec,
        response: { 200: DISCOVERY_RUN, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA },
      },
    },
    async () => {
      const r = await deps.discovery.run();
      return {
        code: 200,
        startedMs: r.startedMs,
        durationMs: r.durationMs,
        collectors: r.collectors,
        processes: r.processes?.length ?? 0,
        listeners: r.sockets?.listeners.length ?? 0,
        watchedProcesses: r.watchedProcesses,
        watchedPorts: r.watchedPorts,
        changes: r.changes,
        statuses: r.statuses,
      };
    },
  );

  typed(app).get(
    '/getProcessByPort/:port',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'The process listening on a TCP port, read live (400 outside 1–65535, 404 when nothing listens)',
        description:
          'Below admin, `cmdline` is redacted: values of password/token/secret/key-like arguments, mysql `-p<x>` ' +
          'and URL credentials read `***`.',
        security: sec,
        params: Type.Object({ port: Type.String({ pattern: '^[0-9]{1,5}$', example: '22' }) }),
        response: { 200: PORT_OWNER, ...errs },
      },
    },
    async (req) => {
      const owner = deps.lookup(parsePortParam(req.params.port));
      if (req.user?.group === 'admin' || owner.cmdline === undefined) return owner;
      return { ...owner, cmdline: redactCommandLine(owner.cmdline) };
    },
  );

  app.post(
    '/computeThreshold',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary:
          'Automatic baselines (median + k·MAD over the last 7 days, ≥ 30 samples) for every monitored metric; `skipped` lists metrics with too little history (metric → samples found)',
        security: sec,
        response: { 200: THRESHOLDS_RUN, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA },
      },
    },
    async () => {
      // Under the store mutex: a cycle's status evaluation sees all the old baselines or all the new, and a reinit
      // never interleaves with the THRESHOLDS writes.
      const r = await deps.mutex.run(async () => {
        const out = await computeAllBaselines(deps.store, { nowMs: now() });
        await deps.status.reloadBaselines();
        return out;
      });
      const n = Object.keys(r.computed).length;
      const short = Object.keys(r.skipped).length;
      const message =
        `computed ${n} baseline${n === 1 ? '' : 's'}` +
        (short
          ? `; could not compute ${short} (fewer than ${MIN_BASELINE_SAMPLES} samples in the window: see skipped)`
          : '');
      return { code: 200, message, minSamples: MIN_BASELINE_SAMPLES, computed: r.computed, skipped: r.skipped };
    },
  );

  app.get(
    '/api/metrics',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: ['metrics'],
        summary: 'Current CPU (since the previous call, ≥ 1 s window), memory, load average, uptime',
        security: sec,
        response: { 200: METRICS_NOW, 401: ERROR_SCHEMA },
      },
    },
    async () => {
      const last = deps.cpu.lastSampleMs;
      if (last === undefined || now() - last < 1000) {
        deps.cpu.sample();
        await new Promise((r) => setTimeout(r, 200));
      }
      const cpu = deps.cpu.sample();
      const m = readMemory();
      const up = readUptime();
      return {
        timeMs: now(),
        cpu: { totalPct: cpu.totalPct, perCorePct: cpu.perCorePct, cores: cpu.cores },
        memory: m,
        load: readLoad(),
        uptime: up,
      };
    },
  );

  typed(app).get(
    '/api/reportSysMetricsGraph/:startTime/:endTime',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: ['metrics'],
        summary: 'System metrics over a range, downsampled to ≤ 300 points per series (avg/min/max)',
        security: sec,
        params: Type.Object(Range),
        response: { 200: SYS_GRAPH, ...errs },
      },
    },
    async (req) => {
      const [s, e] = range(req.params);
      const series = await deps.gate.read(() => graph(deps.store, SYSTEM_GRAPH_KEYS, s, e));
      return { startTime: s, endTime: e, series };
    },
  );

  typed(app).get(
    '/process/reportGraph/:type/:key/:startTime/:endTime',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: ['metrics'],
        summary: 'A metric over a range, downsampled (type: process, system, port, disk or metric)',
        security: sec,
        params: Type.Object({
          type: Type.String({ enum: ['process', 'system', 'port', 'disk', 'metric'] }),
          key: Type.String({ minLength: 1, maxLength: 200, example: 'cpu' }),
          ...Range,
        }),
        response: { 200: METRIC_GRAPH, ...errs },
      },
    },
    async (req) => {
      const [s, e] = range(req.params);
      return {
        type: req.params.type,
        key: req.params.key,
        startTime: s,
        endTime: e,
        series: await deps.gate.read(() => graph(deps.store, graphKeys(req.params.type, req.params.key), s, e)),
      };
    },
  );
}
