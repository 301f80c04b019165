/**
 * Alerting and maintenance windows: the channel catalog, channel settings (secrets shown only as set/unset), test sends
 * and probes, the delivery log, open problems and their acknowledgement, and maintenance windows. The channel routes'
 * schemas are derived from the channel registry (channel-schemas.ts). Admin unless noted: the catalog, deliveries,
 * problems and the window list are readable by readonly users; acknowledging needs the user group.
 */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { AppError } from '../../core/errors.js';
import type { AlertingService } from '../alerting/alerting.service.js';
import {
  CatalogEntry,
  catalogEntry,
  maskedSettingsSchema,
  settingsPatchSchema,
  typeboxValidator,
} from './channel-schemas.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };
const Str = (description: string) => Type.String({ description });
const Settings = Type.Object(
  {},
  { additionalProperties: Type.String(), description: 'string-valued settings; secret fields read set or unset' },
);
/** What Fastify checks of a settings patch; the service then checks it against the channel named in the path. */
const PatchShape = Type.Object({}, { additionalProperties: Type.String({ maxLength: 16_384 }), minProperties: 1 });

const Problem = Type.Object({
  monitor: Type.String(),
  status: Str('status of the open problem'),
  lastStatus: Type.Optional(Str('status of the last run')),
  openedMs: Type.Optional(Type.Number({ description: 'when the problem was first alerted (Unix ms)' })),
  lastAlertMs: Type.Optional(Type.Number({ description: 'when the last problem alert was sent (Unix ms)' })),
  acknowledged: Type.Optional(
    Type.Object({
      by: Str('user name'),
      atMs: Type.Number(),
      note: Type.Optional(Type.String()),
      status: Str('the status acknowledged: only a worse one alerts again'),
    }),
  ),
});
const MonitorParams = Type.Object({ name: Type.String({ maxLength: 128 }) });
const Delivery = Type.Object({
  id: Type.String(),
  channel: Type.String(),
  kind: Str('problem, recovery or test'),
  monitor: Type.String(),
  status: Type.String(),
  outcome: Str('delivered or failed'),
  attempts: Type.Integer(),
  error: Type.Optional(Type.String()),
  createdMs: Type.Number({ description: 'when the alert was queued (Unix ms)' }),
  finishedMs: Type.Number(),
});

const Window = Type.Object({
  id: Type.String(),
  name: Type.String(),
  fromMs: Type.Optional(Type.Number()),
  toMs: Type.Optional(Type.Number()),
  cron: Type.Optional(Type.String()),
  durationMinutes: Type.Optional(Type.Integer()),
  timezone: Type.Optional(Type.String()),
  monitors: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  createdMs: Type.Number(),
  active: Type.Boolean({ description: 'in effect now' }),
  nextChangeMs: Type.Optional(
    Type.Number({ description: 'end of the current occurrence when active, else the next start' }),
  ),
});

const WindowBody = Type.Object(
  {
    name: Str('label, 1-100 characters'),
    from: Type.Optional(Str('one-off: start, Unix ms')),
    to: Type.Optional(Str('one-off: end (exclusive), Unix ms, after from')),
    cron: Type.Optional(
      Str('recurring: cron expression (5 or 6 fields, croner syntax); each occurrence opens a window'),
    ),
    durationMinutes: Type.Optional(Str('recurring: window length in minutes, 1-44640')),
    timezone: Type.Optional(Str("recurring: IANA time zone for cron (default: the server's)")),
    monitors: Type.Optional(Str("comma-separated monitor names; '*' = every monitor")),
    tags: Type.Optional(Str('comma-separated tags ("[a,b]" accepted); monitors carrying any of them are in scope')),
  },
  { additionalProperties: false },
);

export function registerAlertingRoutes(app: FastifyInstance, deps: { alerting: AlertingService }): void {
  const { alerting } = deps;
  const tags = ['alerting'];
  const channels = alerting.channels.list();
  const configurable = channels.filter((c) => !c.external);
  const ChannelParams = Type.Object({
    channel: Type.String({ maxLength: 32, description: `channel id: ${channels.map((c) => c.id).join(', ')}` }),
  });

  app.get(
    '/alerting/catalog',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        summary:
          'The notification channels this service has: settings schema, secret and per-monitor fields, severity map',
        description:
          "One entry per channel of the registry. The dashboard builds its channel forms and the monitor form's notification fields from it.",
        response: { 200: Type.Array(CatalogEntry), ...errs },
      },
    },
    async () => channels.map(catalogEntry),
  );

  app.get(
    '/alerting/channels',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        security: sec,
        summary:
          "Every channel's settings; secrets (webhook URLs, keys, tokens, SMTP password) only as set/unset. email mirrors POST /setsmtpvault",
        response: {
          200: Type.Object(Object.fromEntries(channels.map((c) => [c.id, maskedSettingsSchema(c)]))),
          ...errs,
        },
      },
    },
    async () => alerting.channelSettings.view(),
  );

  app.post<{ Params: { channel: string }; Body: Record<string, string> }>(
    '/alerting/channels/:channel',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        security: sec,
        params: ChannelParams,
        summary: 'Change a channel\'s settings (merged; "" clears a field; "set" keeps a stored secret)',
        description:
          'The body is the settings of the channel named in the path (one schema per channel below, titled by its id). ' +
          "enabled is true or false; enabling needs the channel's required settings. URLs must be https. " +
          'Email is configured through POST /setsmtpvault (400 here). Unknown channel → 404; a bad field → 400 naming it.',
        body: Type.Union(configurable.map(settingsPatchSchema)),
        response: { 200: Settings, ...errs },
      },
      validatorCompiler: typeboxValidator({ body: PatchShape }),
    },
    async (req) => alerting.channelSettings.set(req.params.channel, req.body),
  );

  typed(app).post(
    '/alerting/channels/:channel/test',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        security: sec,
        params: ChannelParams,
        summary:
          'Send a test notification through a channel now (with its current settings, enabled or not), or check it without sending (mode probe)',
        description:
          'Body optional. {"to": "a@x,b@y"}: email needs `to` (comma-separated recipients). {"mode": "probe"}: the channel\'s connection check ' +
          `(channels with one: ${channels
            .filter((c) => c.probe !== undefined)
            .map((c) => c.id)
            .join(', ')}), nothing is sent. PagerDuty and Opsgenie get a test alert that is resolved / closed at once.`,
        body: Type.Object(
          {
            to: Type.Optional(Type.String({ maxLength: 2048, description: 'email: comma-separated recipients' })),
            mode: Type.Optional(
              Type.Union([Type.Literal('send'), Type.Literal('probe')], { description: 'default send' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            latencyMs: Type.Number(),
            error: Type.Optional(Type.String()),
            message: Type.Optional(Str('what the probe found')),
          }),
          ...errs,
        },
      },
      validatorCompiler: typeboxValidator({ optionalBody: true }),
    },
    async (req) => alerting.testChannel(req.params.channel, { to: req.body?.to, mode: req.body?.mode }),
  );

  typed(app).get(
    '/alerting/problems',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        summary:
          'Open problems (a problem alert was sent and the monitor has not recovered), with their acknowledgement',
        querystring: Type.Object({
          monitor: Type.Optional(Type.String({ maxLength: 128, description: 'one monitor' })),
        }),
        response: { 200: Type.Array(Problem), ...errs },
      },
    },
    async (req) => alerting.problems(req.query.monitor),
  );

  typed(app).post(
    '/alerting/ack/:name',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        security: sec,
        params: MonitorParams,
        summary: "Acknowledge a monitor's open problem: no re-notify until it gets worse or recovers",
        description:
          'Stores who (the caller) and when, and the optional note. PagerDuty and Opsgenie (and webhooks) are told. ' +
          'Unknown monitor → 404; no open problem → 409. Acknowledging again replaces the note.',
        body: Type.Object(
          { note: Type.Optional(Type.String({ maxLength: 1000, description: 'why, who is on it' })) },
          { additionalProperties: false },
        ),
        response: { 200: Problem, ...errs, 409: ERROR_SCHEMA },
      },
      validatorCompiler: typeboxValidator({ optionalBody: true }),
    },
    async (req) => alerting.acknowledge(req.params.name, { by: req.user!.username, note: req.body?.note }),
  );

  typed(app).delete(
    '/alerting/ack/:name',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        security: sec,
        params: MonitorParams,
        summary: 'Remove the acknowledgement of an open problem: re-notify resumes (the vendors are not told)',
        description: 'Unknown monitor → 404; not acknowledged → 409.',
        response: { 200: Problem, ...errs, 409: ERROR_SCHEMA },
      },
    },
    async (req) => alerting.unacknowledge(req.params.name),
  );

  typed(app).get(
    '/alerting/deliveries',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        security: sec,
        summary:
          'Recent alert deliveries, newest first: channel, monitor, outcome (delivered/failed), attempts, last error (readonly may read)',
        querystring: Type.Object({
          limit: Type.Optional(
            Type.String({ pattern: '^[0-9]{1,4}$', description: 'at most this many (default 100, max 1000)' }),
          ),
        }),
        response: { 200: Type.Array(Delivery), ...errs },
      },
    },
    async (req) => alerting.deliveries(Math.min(1000, Math.max(1, Number(req.query.limit ?? 100)))),
  );

  const mtags = ['maintenance'];
  app.get(
    '/maintenance',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: mtags,
        security: sec,
        summary:
          'Maintenance windows, with whether each is in effect now (readonly may read). During a window a monitor in scope still runs and records, with status DOWNTIME, and sends no alert',
        response: { 200: Type.Array(Window), ...errs },
      },
    },
    async () => alerting.maintenance.list(),
  );

  typed(app).post(
    '/maintenance',
    {
      config: { auth: 'admin' },
      schema: {
        tags: mtags,
        security: sec,
        summary:
          'Create a maintenance window: one-off {name, from, to} or recurring {name, cron, durationMinutes[, timezone]}, scoped by monitors and/or tags',
        description:
          'A bad cron, duration or range, or no scope → 400 naming the field. Alert counting (notifyAfter) is frozen during a window and resumes after it; an open problem that is OK after the window gets its recovery.',
        body: WindowBody,
        response: { 200: Window, ...errs },
      },
    },
    async (req) => alerting.maintenance.create(req.body),
  );

  typed(app).delete(
    '/maintenance/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: mtags,
        security: sec,
        summary: 'Delete a maintenance window (404 when unknown)',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({ code: Type.Integer(), message: Type.String() }), ...errs },
      },
    },
    async (req) => {
      if (!(await alerting.maintenance.remove(req.params.id)))
        throw AppError.notFound(`maintenance window ${req.params.id} not found`);
      return { code: 200, message: `maintenance window ${req.params.id} deleted` };
    },
  );
}
