/** GET /setting, POST /updateSetting, POST /setsmtpvault (stores, then probes the SMTP server: smtp-config.ts). */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { valueSchema, type SettingsService } from '../../core/settings/settings.service.js';
import type { SmtpConfig } from '../settings/smtp-config.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA };
const PROBE_SCHEMA = Type.Object(
  {
    ok: Type.Boolean({ description: 'mail would go out as configured' }),
    host: Type.String(),
    port: Type.Integer(),
    mode: Type.String({ description: 'smtpSecure: starttls, tls or none' }),
    connected: Type.Boolean(),
    greeting: Type.Optional(Type.String()),
    extensions: Type.Optional(Type.Array(Type.String(), { description: 'EHLO extensions (before STARTTLS)' })),
    starttlsOffered: Type.Optional(Type.Boolean()),
    tls: Type.Optional(
      Type.Object({
        protocol: Type.Union([Type.String(), Type.Null()]),
        cipher: Type.Optional(Type.String()),
        certificateTrusted: Type.Boolean(),
      }),
    ),
    authMechanisms: Type.Optional(Type.Array(Type.String())),
    auth: Type.String({ enum: ['accepted', 'rejected', 'not offered', 'not attempted'] }),
    authReply: Type.Optional(Type.String()),
    willUse: Type.String({ description: 'what sending will do with these settings' }),
    error: Type.Optional(Type.String()),
    latencyMs: Type.Integer(),
  },
  { description: 'what the SMTP probe found' },
);

function bodySchema(settings: SettingsService, description: string): TSchema {
  const props: Record<string, TSchema> = {};
  for (const [k, d] of settings.definitions())
    props[k] = Type.Optional(Type.String({ description: d.description, ...valueSchema(d), default: d.default }));
  return Type.Object(props, { additionalProperties: false, minProperties: 1, description });
}

function viewSchema(settings: SettingsService): TSchema {
  const props: Record<string, TSchema> = {};
  for (const [k, d] of settings.definitions())
    props[k] = d.secret
      ? Type.String({ enum: ['set', 'unset'], description: d.description })
      : Type.String({ description: d.description, ...valueSchema(d) });
  return Type.Object(props);
}

export function registerSettingsRoutes(
  app: FastifyInstance,
  deps: { settings: SettingsService; smtp: SettingsService; smtpConfig: SmtpConfig },
): void {
  const tags = ['settings'];
  const { settings, smtp } = deps;
  app.get(
    '/setting',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'Current settings (secrets shown only as set/unset), with the SMTP settings under smtp',
        security: sec,
        response: {
          200: Type.Object({
            ...(viewSchema(settings) as ReturnType<typeof Type.Object>).properties,
            smtp: viewSchema(smtp),
          }),
          ...errs,
        },
      },
    },
    async () => ({ ...settings.publicView(), smtp: smtp.publicView() }),
  );

  app.post<{ Body: Record<string, string> }>(
    '/updateSetting',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Change any of the settings; validated whole (unknown key or bad value → 400, nothing changes); applies live',
        security: sec,
        body: bodySchema(settings, 'settings to change'),
        response: { 200: viewSchema(settings), ...errs },
      },
    },
    async (req) => settings.update(req.body),
  );

  app.post<{ Body: Record<string, string> }>(
    '/setsmtpvault',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Store the SMTP settings (the password is encrypted at rest and never returned), then probe the server',
        description:
          'After storing, the service connects to smtpHost (at most 10 s): greeting, EHLO, whether STARTTLS is offered, ' +
          'TLS, whether AUTH with smtpUser is accepted. `probe` reports what it found and `probe.willUse` what sending ' +
          'will use; `probe.ok` is false when mail would not go out as configured (e.g. smtpSecure starttls against a ' +
          'relay without STARTTLS). The settings are stored even when the probe fails; `message` says so.',
        security: sec,
        body: bodySchema(smtp, 'SMTP settings (any subset)'),
        response: {
          200: Type.Object({
            ...(viewSchema(smtp) as ReturnType<typeof Type.Object>).properties,
            message: Type.String(),
            probe: Type.Optional(PROBE_SCHEMA),
          }),
          ...errs,
        },
      },
    },
    async (req) => deps.smtpConfig.set(req.body),
  );
}
