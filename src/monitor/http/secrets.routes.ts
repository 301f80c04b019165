/** Named secrets for exec monitors and the scopes of secrets and Vault path prefixes (admin; write-only values). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { MAX } from '../../core/http/schemas.js';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { SecretStore } from '../secrets/secret-store.js';
import { parseScope } from '../secrets/secret-scope.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };
const Names = (description: string) => Type.Array(Type.String({ maxLength: 256 }), { maxItems: 200, description });
const ScopeProps = {
  monitors: Names('monitor names that may use it'),
  tags: Names('monitor tags: a monitor with any of them may use it'),
  origins: Names('origins (https://host[:port]) whose pages the value may be typed into'),
};
const Scope = Type.Object(ScopeProps, {
  additionalProperties: false,
  description:
    'who may use a secret and where it may be typed (docs/security.md §1). Without a scope only monitors an admin saved last may use it.',
});
const Item = Type.Object({ name: Type.String(), updatedMs: Type.Number(), scope: Type.Optional(Scope) });
const VaultScope = Type.Object(
  { prefix: Type.String({ maxLength: 512 }), ...ScopeProps },
  { additionalProperties: false },
);
const Params = Type.Object({ name: Type.String({ maxLength: 64 }) });
const Done = Type.Object({ code: Type.Integer(), message: Type.String() });

export function registerSecretRoutes(app: FastifyInstance, deps: { secrets: SecretStore }): void {
  const tags = ['secrets'];
  const admin = (summary: string, extra: Record<string, unknown>) => ({
    config: { auth: 'admin' as const },
    schema: { tags, summary, security: sec, ...extra },
  });
  app.get(
    '/secrets',
    admin('Names and scopes of stored secrets (values are never returned)', {
      response: { 200: Type.Array(Item), ...errs },
    }),
    async () => deps.secrets.list(),
  );
  app.post<{ Params: { name: string }; Body: { value: string; scope?: Record<string, unknown> } }>(
    '/secrets/:name',
    admin(
      'Create or replace a secret: a password ({{secret:name}}), a TOTP seed in base32 or otpauth:// form ({{totp:name}}), or vaultToken. The scope, when given, replaces the stored one.',
      {
        params: Params,
        body: Type.Object(
          { value: Type.String({ maxLength: MAX.pem }), scope: Type.Optional(Scope) },
          { additionalProperties: false },
        ),
        response: { 200: Item, ...errs },
      },
    ),
    async (req) =>
      deps.secrets.set(
        req.params.name,
        req.body.value,
        req.body.scope ? parseScope(req.body.scope, 'body.scope') : undefined,
      ),
  );
  app.post<{ Params: { name: string }; Body: Record<string, unknown> }>(
    '/secrets/:name/scope',
    admin('Set the scope of a stored secret (the value is kept)', {
      params: Params,
      body: Scope,
      response: { 200: Item, ...errs },
    }),
    async (req) => deps.secrets.setScope(req.params.name, parseScope(req.body, 'body')),
  );
  app.delete<{ Params: { name: string } }>(
    '/secrets/:name',
    admin('Delete a secret', { params: Params, response: { 200: Done, ...errs } }),
    async (req) => {
      await deps.secrets.remove(req.params.name);
      return { code: 200, message: `secret ${req.params.name} deleted` };
    },
  );
  app.get(
    '/vault/scopes',
    admin('Scopes of Vault path prefixes', { response: { 200: Type.Array(VaultScope), ...errs } }),
    async () => deps.secrets.vaultScopes(),
  );
  app.post<{ Body: Record<string, unknown> & { prefix: string } }>(
    '/vault/scopes',
    admin(
      'Create or replace the scope of a Vault path prefix ({{vault:prefix/...#key}}); the longest matching prefix applies',
      { body: VaultScope, response: { 200: VaultScope, ...errs } },
    ),
    async (req) => deps.secrets.setVaultScope(req.body.prefix, parseScope(req.body, 'body')),
  );
  app.delete<{ Querystring: { prefix: string } }>(
    '/vault/scopes',
    admin('Delete the scope of a Vault path prefix (paths under it become admin-only)', {
      querystring: Type.Object({ prefix: Type.String({ maxLength: 512 }) }),
      response: { 200: Done, ...errs },
    }),
    async (req) => {
      await deps.secrets.removeVaultScope(req.query.prefix);
      return { code: 200, message: `Vault scope ${req.query.prefix} deleted` };
    },
  );
}
