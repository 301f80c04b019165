/**
 * Alerting and maintenance windows: channel settings (secrets shown only as set/unset), test sends, the delivery log,
 * and maintenance windows. Admin unless noted (deliveries and the window list are readable by readonly users).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TObject } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { AppError } from '../../core/errors.js';
import type { AlertingService } from '../alerting/alerting.service.js';
import type { MaintenanceInput } from '../alerting/maintenance.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };
const Str = (description: string) => Type.String({ description });
const ChannelParams = Type.Object({
  channel: Type.String({ maxLength: 32, description: 'email, slack, teams or pagerduty' }),
});
const Settings = Type.Object(
  {},
  { additionalProperties: Type.String(), description: 'string-valued settings; secret fields read set or unset' },
);

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

function channelDoc(alerting: AlertingService): string {
  return [...alerting.channels.values()]
    .filter((c) => c.id !== 'email')
    .map(
      (c) =>
        `${c.id}: ${Object.keys((c.settings as TObject).properties).join(', ')} (secret: ${c.secretFields.join(', ')})`,
    )
    .join('; ');
}

export function registerAlertingRoutes(app: FastifyInstance, deps: { alerting: AlertingService }): void {
  const { alerting } = deps;
  const tags = ['alerting'];
  app.get(
    '/alerting/channels',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        security: sec,
        summary:
          "Every channel's settings; secrets (webhook URLs, routing keys, SMTP password) only as set/unset. email mirrors POST /setsmtpvault",
        response: { 200: Type.Object({}, { additionalProperties: Settings }), ...errs },
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
        summary: 'Change a chat/paging channel\'s settings (merged; "" clears a field; "set" keeps a stored secret)',
        description:
          `Fields per channel — ${channelDoc(alerting)}. enabled is true or false; enabling needs the channel's URL/key. ` +
          'Webhook URLs must be https. Email is configured through POST /setsmtpvault (400 here). Unknown channel → 404; a bad field → 400 naming it.',
        body: Type.Object({}, { additionalProperties: Type.String(), minProperties: 1 }),
        response: { 200: Settings, ...errs },
      },
    },
    async (req) => alerting.channelSettings.set(req.params.channel, req.body),
  );

  app.post<{ Params: { channel: string }; Body: { to?: unknown } | undefined }>(
    '/alerting/channels/:channel/test',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        security: sec,
        params: ChannelParams,
        summary:
          'Send a test notification through a channel now (with its current settings, enabled or not); reports ok, latency and the error',
        description:
          'Body optional: {"to": "a@x,b@y"} — email needs `to` (comma-separated recipients). PagerDuty gets an info event that is resolved at once.',
        response: {
          200: Type.Object({ ok: Type.Boolean(), latencyMs: Type.Number(), error: Type.Optional(Type.String()) }),
          ...errs,
        },
      },
    },
    async (req) => {
      const to = req.body && typeof req.body === 'object' ? req.body.to : undefined;
      if (to !== undefined && typeof to !== 'string')
        throw AppError.badRequest('to must be a comma-separated string', 'body.to');
      return alerting.testChannel(req.params.channel, { to });
    },
  );

  app.get<{ Querystring: { limit?: string } }>(
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

  app.post<{ Body: MaintenanceInput }>(
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

  app.delete<{ Params: { id: string } }>(
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
