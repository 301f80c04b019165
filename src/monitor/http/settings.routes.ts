/** GET /setting, POST /updateSetting, POST /setsmtpvault. */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { SettingsService } from '../../core/settings/settings.service.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA };

function bodySchema(settings: SettingsService, description: string): TSchema {
  const props: Record<string, TSchema> = {};
  for (const [k, d] of settings.definitions()) props[k] = Type.Optional(Type.String({ description: d.description }));
  return Type.Object(props, { additionalProperties: false, minProperties: 1, description });
}

function viewSchema(settings: SettingsService): TSchema {
  const props: Record<string, TSchema> = {};
  for (const [k, d] of settings.definitions())
    props[k] = Type.String({ description: d.secret ? `${d.description}; shown as set or unset` : d.description });
  return Type.Object(props);
}

export function registerSettingsRoutes(
  app: FastifyInstance,
  deps: { settings: SettingsService; smtp: SettingsService },
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
        summary: 'Store the SMTP settings (the password is encrypted at rest and never returned)',
        security: sec,
        body: bodySchema(smtp, 'SMTP settings (any subset)'),
        response: { 200: viewSchema(smtp), ...errs },
      },
    },
    async (req) => smtp.update(req.body),
  );
}
