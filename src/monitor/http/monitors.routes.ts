/**
 * Monitors (spec §4 "Authentication and monitors"): create and update for every type, list, details, run now,
 * enable/disable, delete. `exec` in the enable/disable/delete paths is the spec's path word: those act on a monitor of
 * any type, found by sched + name (404 when unknown or when sched doesn't match).
 */
import type { PeerProof } from '../../core/auth/peer-proof.js';
import { forwardedByPeer } from '../cluster/cluster-client.js';
import type { RunNow } from '../cluster/run-forward.js';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { DBNAMES, STATUSES, type DbName, type MonitorType } from '../monitor-types/types.js';
import { COMMON_FIELDS, SCHED_PARAM_DESCRIPTION } from '../monitors/common-fields.js';
import type { MonitorsApi } from '../monitors/monitors.api.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA, 409: ERROR_SCHEMA };
const Name = Type.String({ maxLength: 128, example: 'web-1' });
const Sched = Type.String({ maxLength: 16, description: SCHED_PARAM_DESCRIPTION, example: '1MIN' });
const MonitorView = Type.Object(
  {
    name: Type.String(),
    type: Type.String({ enum: [...DBNAMES] }),
    secretFieldsSet: Type.Array(Type.String()),
    createdMs: Type.Number(),
    updatedMs: Type.Number(),
    createdBy: Type.Optional(Type.String({ description: 'user who created the monitor (absent for older records)' })),
    updatedBy: Type.Optional(
      Type.String({ description: 'user who last changed the monitor (absent for older records)' }),
    ),
  },
  {
    additionalProperties: true,
    description: 'every stored field of the monitor as a string, except secrets (listed in secretFieldsSet)',
  },
);
/** Where a result ran (history/origins.ts): added fields, absent for results recorded before origins existed. */
const Origin = {
  probe: Type.Optional(Type.String({ description: 'PROBE of the instance that ran the check (absent: unknown)' })),
  location: Type.Optional(Type.String({ description: "LOCATION of that instance ('' when it has none)" })),
  instance: Type.Optional(
    Type.String({ description: "that instance's INSTANCE name, by default its host name (docs/cluster.md)" }),
  ),
};
const Last = Type.Object({
  status: Type.String({ enum: [...STATUSES] }),
  responseTimeMs: Type.Number(),
  ts: Type.Number(),
  message: Type.Optional(Type.String()),
  certDaysLeft: Type.Optional(Type.Number()),
  suppressedBy: Type.Optional(
    Type.String({
      description: "the failing parent (a monitor's name) this result's alerts were suppressed for (see `parents`)",
    }),
  ),
  ...Origin,
});
const Recent = Type.Object(
  {
    ts: Type.Number(),
    status: Type.String({ enum: [...STATUSES] }),
    responseTimeMs: Type.Number(),
    message: Type.Optional(Type.String()),
    metrics: Type.Optional(Type.Record(Type.String(), Type.Number())),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    ...Origin,
  },
  { additionalProperties: true },
);
const Details = Type.Object(
  {
    last: Type.Union([Last, Type.Null()], { description: 'the latest result (null: never ran)' }),
    recent: Type.Array(Recent, { description: 'the last 20 results, newest first' }),
  },
  { additionalProperties: true, description: 'also: monitor, schedule, thresholds (and per type, e.g. push)' },
);
const Summary = Type.Object(
  {
    ...MonitorView.properties,
    last: Type.Optional(Last),
    nextDueMs: Type.Union([Type.Number(), Type.Null()]),
    unassigned: Type.Optional(
      Type.Boolean({
        description: 'cluster: no live instance of the monitor probe, so it runs nowhere (docs/cluster.md)',
      }),
    ),
  },
  { additionalProperties: true },
);
const RunOut = Type.Object(
  {
    name: Type.String(),
    type: Type.Optional(Type.String()),
    ts: Type.Number(),
    status: Type.String({ enum: [...STATUSES] }),
    responseTimeMs: Type.Number(),
    outcome: Type.Optional(Type.String()),
    attempts: Type.Optional(Type.Integer()),
    message: Type.Optional(Type.String()),
    metrics: Type.Optional(Type.Record(Type.String(), Type.Number())),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    thresholds: Type.Optional(Type.Object({}, { additionalProperties: true })),
    downtime: Type.Optional(Type.Boolean()),
    ...Origin,
    state: Type.String({ enum: ['on', 'off'], description: "the monitor's state: an off monitor can be run by hand" }),
    note: Type.Optional(Type.String({ description: 'set when the monitor is off: this was a run by hand only' })),
  },
  {
    description:
      'show: the full result, with where it ran (probe, location, instance); hide: name, ts, status, responseTimeMs ' +
      'and state only. A monitor in state off runs too ' +
      '(a manual test, recorded like a scheduled run); it never runs on schedule.',
  },
);
const Ack = Type.Object({
  code: Type.Integer(),
  message: Type.String(),
  monitor: Type.Optional(MonitorView),
  generated: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description:
        'secrets the service generated (push: token), shown in this answer only: store them now, they are never ' +
        'shown again (a rotation makes new ones)',
    }),
  ),
  warnings: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'why the monitor as saved will send no alert it seems to ask for (e.g. emailOnF with notifyStatus off)',
    }),
  ),
});

/**
 * The body of create (`required`: the fields validation requires for the type) or update (every field optional:
 * absent fields keep their values).
 */
function monitorBody(type: MonitorType, required: readonly string[]): TSchema {
  const props: Record<string, TSchema> = {};
  const all: Record<string, TSchema> = { ...COMMON_FIELDS, ...(type.fields.properties as Record<string, TSchema>) };
  for (const [k, s] of Object.entries(all)) {
    // Generated secrets (push: the token) are made by the service, never sent: not in the body (400 if present).
    if (type.generatedSecrets?.[k]) continue;
    let schema = s;
    // Secrets are write-only (OpenAPI `writeOnly`): clients such as `sentinel apply` and the dashboard learn them here.
    if (type.secretFields.includes(k)) schema = { ...schema, writeOnly: true };
    // A type's own defaults (exec: timeout 60) are what the OpenAPI shows for it.
    const dflt = type.defaults?.[k];
    if (dflt !== undefined) schema = { ...schema, default: dflt };
    props[k] = required.includes(k) ? schema : Type.Optional(schema);
  }
  return Type.Object(props, { additionalProperties: false });
}

export function registerMonitorRoutes(
  app: FastifyInstance,
  deps: {
    api: MonitorsApi;
    types: ReadonlyMap<DbName, MonitorType>;
    runNow?: RunNow;
    /** Checks the proof of a run now another member forwarded (cluster-client.ts `forwardedByPeer`). */
    peers?: PeerProof;
  },
): void {
  const runNow: RunNow = deps.runNow ?? ((name, full) => deps.api.runNow(name, full));
  const { api } = deps;
  const tags = ['monitors'];
  for (const [id, type] of deps.types) {
    const required = ['name', ...(type.requiredCommon ?? []), ...type.required];
    const createBody = monitorBody(type, required);
    const updateBody = monitorBody(type, []);
    app.post<{ Body: Record<string, string> }>(
      `/${id}/create`,
      {
        config: { auth: 'user' },
        schema: {
          tags,
          summary: `Create a ${id} monitor`,
          security: sec,
          body: createBody,
          description: `Required: ${required.join(', ')}. Secrets (${type.secretFields.join(', ') || 'none'}) are encrypted at rest and never returned. 409 when the name exists (names are unique across types).`,
          response: { 201: Ack, ...errs },
        },
      },
      async (req, reply) => reply.code(201).send(await api.create(id, req.body, req.user)),
    );

    app.post<{ Body: Record<string, string>; Params: { sched: string; name: string } }>(
      `/${id}/update/:sched/:name`,
      {
        config: { auth: 'user' },
        schema: {
          tags,
          summary: `Update a ${id} monitor`,
          security: sec,
          body: updateBody,
          params: Type.Object({ sched: Sched, name: Name }),
          description:
            'The given fields replace the stored ones; absent fields (and absent secrets) keep their values. The name cannot change.' +
            (type.secretTarget
              ? ` Stored secrets stay bound to their target: a change of ${Object.keys(type.secretTarget({ name: '' })).join(', ')} must supply every set secret again (else 400 naming it).`
              : ''),
          response: { 200: Ack, ...errs },
        },
      },
      async (req) => api.update(id, req.params.sched, req.params.name, req.body, req.user),
    );
    if (type.generatedSecrets) registerRotate(app, api, id, Object.keys(type.generatedSecrets));
  }

  typed(app).get(
    '/monitors',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'All monitors of all types and schedules, with their last result and next due time',
        security: sec,
        description:
          "Without limit: every monitor (the spec's behaviour). With offset/limit: one page, in a stable order (by name after a restart, then by creation); the header x-total-count gives the number that matched.",
        querystring: Type.Object({
          type: Type.Optional(Type.String({ enum: [...DBNAMES] })),
          state: Type.Optional(Type.String({ enum: ['on', 'off'] })),
          offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
          limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
        }),
        response: { 200: Type.Array(Summary), ...errs },
      },
    },
    async (req, reply) => {
      const q = req.query;
      const { json, total } = api.listJson({
        type: q.type,
        state: q.state,
        offset: q.offset === undefined ? undefined : Number(q.offset),
        limit: q.limit === undefined ? undefined : Number(q.limit),
      });
      return reply.type('application/json; charset=utf-8').header('x-total-count', String(total)).send(json);
    },
  );

  typed(app).post(
    '/getMonitorDetails',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary:
          'Details of one monitor: definition, schedule (cron, offset, next due), effective thresholds, last and recent results',
        security: sec,
        body: Type.Object(
          { type: Type.String({ enum: [...DBNAMES] }), name: Name, sched: Sched },
          { additionalProperties: false },
        ),
        response: { 200: Details, ...errs },
      },
    },
    async (req) => api.details(req.body.type as DbName, req.body.name, req.body.sched),
  );

  typed(app).get(
    '/monitor/run/:title/:show',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Run a monitor now and return its result',
        security: sec,
        params: Type.Object({ title: Name, show: Type.String({ enum: ['show', 'hide'] }) }),
        response: { 200: RunOut, ...errs },
      },
    },
    async (req) =>
      runNow(req.params.title, req.params.show === 'show', {
        authorization: req.headers.authorization,
        forwarded: forwardedByPeer(req, deps.peers),
      }),
  );

  for (const [verb, state] of [
    ['enable', 'on'],
    ['disable', 'off'],
  ] as const) {
    typed(app).post(
      `/exec/${verb}/:sched/:name`,
      {
        config: { auth: 'user' },
        schema: {
          tags,
          summary: `Set a monitor's state ${state} (any type)`,
          security: sec,
          params: Type.Object({ sched: Sched, name: Name }),
          response: { 200: Ack, ...errs },
        },
      },
      async (req) => api.setState(req.params.sched, req.params.name, state, req.user),
    );
  }

  typed(app).delete(
    '/delete/exec/:sched/:name',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Delete a monitor (any type) and its history',
        security: sec,
        params: Type.Object({ sched: Sched, name: Name }),
        response: { 200: Ack, ...errs },
      },
    },
    async (req) => api.remove(req.params.sched, req.params.name),
  );
}

/** POST /<type>/rotate/{sched}/{name}: new generated secrets (the old ones stop at once), shown in this answer only. */
function registerRotate(app: FastifyInstance, api: MonitorsApi, id: DbName, fields: string[]): void {
  typed(app).post(
    `/${id}/rotate/:sched/:name`,
    {
      config: { auth: 'user' },
      schema: {
        tags: ['monitors'],
        summary: `Rotate a ${id} monitor's ${fields.join(', ')}`,
        security: sec,
        description:
          `Makes a new ${fields.join(', ')} and returns it under \`generated\` — the only time it is shown; the ` +
          'old value stops working at once. Same permission as an update (user or admin).',
        params: Type.Object({ sched: Sched, name: Name }),
        response: { 200: Ack, ...errs },
      },
    },
    async (req) => api.rotate(id, req.params.sched, req.params.name, req.user),
  );
}
