/** Discovery, process lookup, thresholds, current metrics and graphs: thin routes over DiscoveryApi. */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { GRAPH_TYPES, type DiscoveryApi } from '../discovery/discovery.api.js';
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

export function registerDiscoveryRoutes(app: FastifyInstance, deps: { api: DiscoveryApi }): void {
  const { api } = deps;
  const tags = ['discovery'];
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
    async () => api.run(),
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
    async (req) => api.processByPort(req.params.port, req.user?.group === 'admin'),
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
    async () => api.computeThresholds(),
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
    async () => api.metricsNow(),
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
    async (req) => api.systemGraph(req.params),
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
          type: Type.String({ enum: [...GRAPH_TYPES] }),
          key: Type.String({ minLength: 1, maxLength: 200, example: 'cpu' }),
          ...Range,
        }),
        response: { 200: METRIC_GRAPH, ...errs },
      },
    },
    async (req) => api.metricGraph(req.params),
  );
}
