/** Settings, SMTP and integrator checks; the settings schemas come from the definitions (settings-schemas.ts). */
import type { FastifyInstance } from 'fastify';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { IntegratorResult } from '../integrators.js';
import type { AgentSettings } from '../settings.js';

import { INTEGRATORS, sec } from './schemas.js';
import { settingsSchemas } from './settings-schemas.js';

const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA };

export function registerSettingsRoutes(
  app: FastifyInstance,
  deps: { settings: AgentSettings; checkIntegrators: () => Promise<IntegratorResult[]> },
): void {
  const tags = ['settings'];
  const schemas = settingsSchemas(deps.settings);
  app.get(
    '/api/setting',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'Current settings and SMTP configuration (never the password)',
        security: sec,
        response: { 200: schemas.view, 401: ERROR_SCHEMA },
      },
    },
    async () => ({ ...deps.settings.get(), ...deps.settings.smtpPublic() }),
  );

  app.post<{ Body: Record<string, string> }>(
    '/updateSetting',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Update any settings keys (validated; unknown keys → 400). See docs/agent.md for every key.',
        security: sec,
        body: schemas.settingsBody,
        response: { 200: schemas.settingsAck, ...errs },
      },
    },
    async (req) => ({ code: 200, message: 'settings updated', settings: await deps.settings.update(req.body ?? {}) }),
  );

  app.post<{ Body: Record<string, string> }>(
    '/setsmtp',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Store the SMTP configuration (password encrypted at rest, never returned)',
        security: sec,
        body: schemas.smtpBody,
        response: { 200: schemas.smtpAck, ...errs },
      },
    },
    async (req) => ({
      code: 200,
      message: 'SMTP configuration stored',
      smtp: await deps.settings.setSmtp(req.body ?? {}),
    }),
  );

  app.post(
    '/checkConnectIntegrators',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: 'Test every configured integrator (SMTP: connect, STARTTLS, auth) within a timeout',
        security: sec,
        response: { 200: INTEGRATORS, ...errs },
      },
    },
    async () => {
      const integrators = await deps.checkIntegrators();
      return { code: 200, ok: integrators.every((i) => i.ok || !i.configured), integrators };
    },
  );
}
