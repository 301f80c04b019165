/** POST /timelineGraph, POST /histGraph, GET /getTrend (readonly and up). Times are Unix ms path segments. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { HistoryService } from '../history/history.service.js';
import { histGraph, HIST_DEFAULT_POINTS, HIST_MAX_POINTS, HIST_MIN_POINTS } from '../reporting/hist-graph.js';
import { timelineGraph } from '../reporting/timeline.js';
import { trend } from '../reporting/trend.js';
import { isDbName, type DbName } from '../history/types.js';

export interface ReportingRouteDeps {
  history: HistoryService;
  monitorExists(dbname: DbName, name: string): boolean | Promise<boolean>;
}

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };
const DBNAME = Type.String({ description: 'exec, url, api, tcp, ping, nslookup, snmp, db or sys' });
const KEY = Type.String({ description: 'monitor name' });
const RANGE_PARAMS = Type.Object({
  dbname: DBNAME,
  key: KEY,
  startTime: Type.String({ description: 'Unix ms' }),
  endTime: Type.String({ description: 'Unix ms, > startTime' }),
});
interface RangeParams {
  dbname: string;
  key: string;
  startTime: string;
  endTime: string;
}

function ms(v: string, field: string): number {
  if (!/^\d{1,15}$/.test(v)) throw AppError.badRequest(`${field} must be Unix milliseconds`, field);
  return Number(v);
}

async function monitor(deps: ReportingRouteDeps, dbname: string, key: string): Promise<DbName> {
  if (!isDbName(dbname)) throw AppError.badRequest('unknown dbname', 'dbname');
  if (!(await deps.monitorExists(dbname, key))) throw AppError.notFound(`no ${dbname} monitor named ${key}`);
  return dbname;
}

function range(p: RangeParams): [number, number] {
  const start = ms(p.startTime, 'startTime');
  const end = ms(p.endTime, 'endTime');
  if (end <= start) throw AppError.badRequest('endTime must be after startTime', 'endTime');
  return [start, end];
}

export function registerReportingRoutes(app: FastifyInstance, deps: ReportingRouteDeps): void {
  const tags = ['reporting'];
  app.post<{ Params: RangeParams }>(
    '/timelineGraph/:dbname/:key/:startTime/:endTime',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        params: RANGE_PARAMS,
        summary:
          'Status timeline: contiguous {from, to, status} segments clipped to the range, and % of time per status',
        response: { ...errs },
      },
    },
    async (req) => {
      const [start, end] = range(req.params);
      const db = await monitor(deps, req.params.dbname, req.params.key);
      return timelineGraph(deps.history, db, req.params.key, start, end);
    },
  );

  app.post<{ Params: RangeParams; Querystring: { points?: string } }>(
    '/histGraph/:dbname/:key/:startTime/:endTime',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        params: RANGE_PARAMS,
        querystring: Type.Object({
          points: Type.Optional(
            Type.String({
              description: `max points, ${HIST_MIN_POINTS}..${HIST_MAX_POINTS} (default ${HIST_DEFAULT_POINTS})`,
            }),
          ),
        }),
        summary:
          'Response time and numeric metrics over time, min/avg/max per bucket, at most `points` buckets (columnar)',
        response: { ...errs },
      },
    },
    async (req) => {
      const [start, end] = range(req.params);
      const points = req.query.points === undefined ? undefined : Number(req.query.points);
      if (points !== undefined && !Number.isInteger(points))
        throw AppError.badRequest('points must be an integer', 'points');
      const db = await monitor(deps, req.params.dbname, req.params.key);
      return histGraph(deps.history, db, req.params.key, start, end, points);
    },
  );

  app.get<{ Params: { dbname: string; key: string } }>(
    '/getTrend/:dbname/:key',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        params: Type.Object({ dbname: DBNAME, key: KEY }),
        summary:
          'Availability, avg and p95 response, counts by status for 24h, 7d, 4w, with the change vs the previous period',
        response: { ...errs },
      },
    },
    async (req) => {
      const db = await monitor(deps, req.params.dbname, req.params.key);
      return trend(deps.history, db, req.params.key);
    },
  );
}
