/** POST /timelineGraph, POST /histGraph, GET /getTrend (readonly and up). Times are Unix ms path segments. */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { HistoryService } from '../history/history.service.js';
import { histGraph, HIST_DEFAULT_POINTS, HIST_MAX_POINTS, HIST_MIN_POINTS } from '../reporting/hist-graph.js';
import { timelineGraph } from '../reporting/timeline.js';
import { trend } from '../reporting/trend.js';
import { DBNAMES, isDbName, STATUSES, type DbName } from '../history/types.js';

export interface ReportingRouteDeps {
  history: HistoryService;
  monitorExists(dbname: DbName, name: string): boolean | Promise<boolean>;
}

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };
const DBNAME = Type.String({ enum: [...DBNAMES], description: "the monitor's type" });
const KEY = Type.String({ description: 'monitor name', maxLength: 128, example: 'web-1' });
const UNIX_MS = (description: string, example: string) =>
  Type.String({ description, pattern: '^[0-9]{1,15}$', example });
const RANGE_PARAMS = Type.Object({
  dbname: DBNAME,
  key: KEY,
  startTime: UNIX_MS('Unix ms', '1700000000000'),
  endTime: UNIX_MS('Unix ms, > startTime', '4102444800000'),
});
const Num = Type.Number();
const NumOrNull = Type.Union([Type.Number(), Type.Null()]);
const Head = { dbname: DBNAME, name: Type.String(), startTime: Num, endTime: Num };
const Status = Type.String({ enum: [...STATUSES] });
const TIMELINE = Type.Object({
  ...Head,
  segments: Type.Array(Type.Object({ from: Num, to: Num, status: Status })),
  coveredMs: Num,
  sharePct: Type.Object(Object.fromEntries(STATUSES.map((s) => [s, Type.Optional(Num)])), {
    description: 'percent of covered time per status (only statuses that occur)',
  }),
});
const MIN_AVG_MAX = Type.Object({ min: Type.Array(NumOrNull), avg: Type.Array(NumOrNull), max: Type.Array(NumOrNull) });
const HIST = Type.Object({
  ...Head,
  source: Type.String({ enum: ['raw', 'rollup'] }),
  bucketMs: Num,
  t: Type.Array(Num, { description: 'bucket start times (Unix ms)' }),
  count: Type.Array(Num, { description: 'results per bucket' }),
  responseMs: MIN_AVG_MAX,
  metrics: Type.Record(Type.String(), MIN_AVG_MAX, { description: 'per numeric metric of the type' }),
});
const PERIOD_PROPS = {
  from: Num,
  to: Num,
  total: Num,
  availabilityPct: NumOrNull,
  avgResponseMs: NumOrNull,
  p95ResponseMs: NumOrNull,
  counts: Type.Object(Object.fromEntries(STATUSES.map((s) => [s, Num])), { description: 'results per status' }),
};
const TREND_ENTRY = Type.Object({
  ...PERIOD_PROPS,
  previous: Type.Object(PERIOD_PROPS),
  change: Type.Object({ availabilityPct: NumOrNull, avgResponseMs: NumOrNull, p95ResponseMs: NumOrNull }),
});
const TREND = Type.Object({
  dbname: DBNAME,
  name: Type.String(),
  now: Num,
  '24h': TREND_ENTRY,
  '7d': TREND_ENTRY,
  '4w': TREND_ENTRY,
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
  typed(app).post(
    '/timelineGraph/:dbname/:key/:startTime/:endTime',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        params: RANGE_PARAMS,
        summary:
          'Status timeline: contiguous {from, to, status} segments clipped to the range, and % of time per status',
        response: { 200: TIMELINE, ...errs },
      },
    },
    async (req) => {
      const [start, end] = range(req.params);
      const db = await monitor(deps, req.params.dbname, req.params.key);
      return timelineGraph(deps.history, db, req.params.key, start, end);
    },
  );

  typed(app).post(
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
              pattern: '^[0-9]{1,9}$',
            }),
          ),
        }),
        summary:
          'Response time and numeric metrics over time, min/avg/max per bucket, at most `points` buckets (columnar)',
        response: { 200: HIST, ...errs },
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

  typed(app).get(
    '/getTrend/:dbname/:key',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        params: Type.Object({ dbname: DBNAME, key: KEY }),
        summary:
          'Availability, avg and p95 response, counts by status for 24h, 7d, 4w, with the change vs the previous period',
        response: { 200: TREND, ...errs },
      },
    },
    async (req) => {
      const db = await monitor(deps, req.params.dbname, req.params.key);
      return trend(deps.history, db, req.params.key);
    },
  );
}
