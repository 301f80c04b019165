/** Named secrets for exec monitors (admin; write-only values). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { SecretStore } from '../secrets/secret-store.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };
const Item = Type.Object({ name: Type.String(), updatedMs: Type.Number() });
const Params = Type.Object({ name: Type.String({ maxLength: 64 }) });

export function registerSecretRoutes(app: FastifyInstance, deps: { secrets: SecretStore }): void {
  const tags = ['secrets'];
  app.get(
    '/secrets',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Names of stored secrets (values are never returned)',
        security: sec,
        response: { 200: Type.Array(Item), ...errs },
      },
    },
    async () => deps.secrets.list(),
  );
  app.post<{ Params: { name: string }; Body: { value: string } }>(
    '/secrets/:name',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Create or replace a secret: a password ({{secret:name}}), a TOTP seed in base32 or otpauth:// form ({{totp:name}}), or vaultToken',
        security: sec,
        params: Params,
        body: Type.Object({ value: Type.String() }, { additionalProperties: false }),
        response: { 200: Item, ...errs },
      },
    },
    async (req) => deps.secrets.set(req.params.name, req.body.value),
  );
  app.delete<{ Params: { name: string } }>(
    '/secrets/:name',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Delete a secret',
        security: sec,
        params: Params,
        response: { 200: Type.Object({ code: Type.Integer(), message: Type.String() }), ...errs },
      },
    },
    async (req) => {
      await deps.secrets.remove(req.params.name);
      return { code: 200, message: `secret ${req.params.name} deleted` };
    },
  );
}
