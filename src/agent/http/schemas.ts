/**
 * The agent's request and response schemas (issue 14 §1): every route's 2xx answer has a schema, with which Fastify
 * serialises it (an undeclared field is dropped, never leaked). The settings routes' schemas are derived from the
 * settings definitions (settings-schemas.ts).
 */
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';

export const sec = [{ bearer: [] }];
export const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };

const Num = Type.Number();
const NumOrNull = Type.Union([Type.Number(), Type.Null()]);
const LEVELS = ['OK', 'MINOR', 'MAJOR', 'CRITICAL'];

export const INTEGRATORS = Type.Object({
  code: Type.Integer(),
  ok: Type.Boolean(),
  integrators: Type.Array(
    Type.Object({
      name: Type.String(),
      configured: Type.Boolean(),
      ok: Type.Boolean(),
      latencyMs: Num,
      error: Type.Optional(Type.String()),
    }),
  ),
});

const Level = Type.String({ enum: LEVELS });
export const DISCOVERY_RUN = Type.Object({
  code: Type.Integer(),
  startedMs: Num,
  durationMs: Num,
  collectors: Type.Record(
    Type.String(),
    Type.Object({ ok: Type.Boolean(), durationMs: Num, error: Type.Optional(Type.String()) }),
  ),
  processes: Type.Integer({ description: 'processes seen' }),
  listeners: Type.Integer({ description: 'listening sockets seen' }),
  watchedProcesses: Type.Array(
    Type.Object({
      name: Type.String(),
      count: Num,
      cpuPct: Num,
      rssBytes: Num,
      memPct: Num,
      pids: Type.Array(Num),
    }),
  ),
  watchedPorts: Type.Array(
    Type.Object({
      port: Num,
      listening: Type.Boolean(),
      pid: NumOrNull,
      processName: Type.Union([Type.String(), Type.Null()]),
      established: Num,
    }),
  ),
  changes: Type.Array(
    Type.Object({
      key: Type.String(),
      // OpenAPI 3.0: a nullable enum lists null among its values.
      from: Type.Unsafe<string | null>({ type: 'string', nullable: true, enum: [...LEVELS, null] }),
      to: Level,
      value: NumOrNull,
      reason: Type.Optional(Type.String()),
      atMs: Num,
    }),
  ),
  statuses: Type.Record(Type.String(), Level, { description: 'metric key → level' }),
});

export const PORT_OWNER = Type.Object({
  port: Num,
  listenAddresses: Type.Array(Type.String()),
  pid: NumOrNull,
  ppid: Type.Optional(Num),
  name: Type.Optional(Type.String()),
  cmdline: Type.Optional(Type.String()),
  uid: Type.Optional(Num),
  user: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  cpuPct: Type.Optional(Num),
  rssBytes: Type.Optional(Num),
  memPct: Type.Optional(Num),
  threads: Type.Optional(Num),
  fds: Type.Optional(NumOrNull),
  startTimeMs: Type.Optional(Num),
});

const BASELINE = Type.Object({
  min: Num,
  maj: Num,
  cri: Num,
  median: Num,
  mad: Num,
  samples: Num,
  computedAtMs: Num,
  method: Type.String({ enum: ['median+k*MAD'] }),
});
export const THRESHOLDS_RUN = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  minSamples: Num,
  computed: Type.Record(Type.String(), BASELINE, { description: 'metric key → baseline' }),
  skipped: Type.Record(Type.String(), Num, { description: 'metric key → samples found (too few)' }),
});

export const METRICS_NOW = Type.Object({
  timeMs: Num,
  cpu: Type.Object({ totalPct: Num, perCorePct: Type.Array(Num), cores: Num }),
  memory: Type.Object({
    totalBytes: Num,
    availableBytes: Num,
    usedBytes: Num,
    freeBytes: Num,
    usedPct: Num,
    swapTotalBytes: Num,
    swapFreeBytes: Num,
    swapUsedBytes: Num,
    swapUsedPct: Num,
  }),
  load: Type.Object({ load1: Num, load5: Num, load15: Num, runnable: Num, entities: Num }),
  uptime: Type.Object({ uptimeMs: Num, bootTimeMs: Num }),
});

const SERIES = Type.Record(
  Type.String(),
  Type.Array(Type.Object({ timeMs: Num, avg: Num, min: Num, max: Num, samples: Num })),
  { description: 'series key → downsampled points' },
);
export const SYS_GRAPH = Type.Object({ startTime: Num, endTime: Num, series: SERIES });
export const METRIC_GRAPH = Type.Object({
  type: Type.String(),
  key: Type.String(),
  startTime: Num,
  endTime: Num,
  series: SERIES,
});

const Stored = Type.Unknown({ description: 'the stored document' });
export const DB_ENTRY = Type.Object({
  bucket: Type.String(),
  key: Type.String(),
  value: Stored,
  timeMs: Type.Optional(Type.Number({ description: 'for a bare series key: the time of the latest point' })),
});
export const DB_ALL = Type.Record(Type.String(), Stored, { description: 'key → stored document (at most 10,000)' });
export const DB_STATS = Type.Object({
  driver: Type.String(),
  buckets: Type.Array(Type.Object({ name: Type.String(), keys: Num, bytes: Type.Optional(Num) })),
  totalKeys: Num,
});
export const BACKUP = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  file: Type.String(),
  bytes: Num,
  tookMs: Num,
});
export const REINIT = Type.Object({ code: Type.Integer(), message: Type.String(), dropped: Type.Array(Type.String()) });
