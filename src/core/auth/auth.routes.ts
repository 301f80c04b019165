/**
 * Login, component logins, token refresh and long-lived token administration, shared by both services (each passes
 * its own paths and token kinds). Response of every login and of /refresh_token: { code: 200, expire, token }.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import { ERROR_SCHEMA } from '../http/error-handler.js';
import { bearerToken } from '../http/auth-guard.js';
import type { TokenService } from './tokens.js';
import type { UserService } from './users.service.js';

export const Credentials = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);
export const TokenReply = Type.Object({
  code: Type.Integer({ description: '200 on success' }),
  expire: Type.String({ description: 'ISO 8601 UTC expiry' }),
  token: Type.String({ description: 'JWT (RS256)' }),
});
const TrackedTokenSchema = Type.Object({
  id: Type.String(),
  username: Type.String(),
  kind: Type.String(),
  issuedMs: Type.Number(),
  expiresMs: Type.Number(),
  revoked: Type.Boolean(),
  revokedMs: Type.Optional(Type.Number()),
});

export interface LoginRoute {
  path: string;
  kind: string;
  summary: string;
}

export function registerAuthRoutes(
  app: FastifyInstance,
  deps: { tokens: TokenService; users: UserService; logins: LoginRoute[]; tag?: string },
): void {
  const { tokens, users } = deps;
  const tags = [deps.tag ?? 'auth'];
  for (const login of deps.logins) {
    const spec = tokens.kinds[login.kind]!;
    app.post<{ Body: { username: string; password: string } }>(
      login.path,
      {
        config: { auth: 'none' },
        schema: {
          tags,
          summary: login.summary,
          description: `Token lifetime ${Math.round(spec.lifetimeMs / 3_600_000)} h.${spec.adminOnly ? ' Admins only (403 otherwise).' : ''}${spec.tracked ? ' The token has an id and can be listed and revoked under /api/tokens.' : ''} 10 failed logins for a user or client within 5 minutes block it for 30 s (429).`,
          body: Credentials,
          response: { 200: TokenReply, 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 429: ERROR_SCHEMA },
        },
      },
      async (req) => {
        const u = await users.authenticate(req.body.username, req.body.password, req.ip);
        if (spec.adminOnly && u.group !== 'admin')
          throw AppError.forbidden(`only admins may obtain ${login.path} tokens`);
        const t = await tokens.issue(u, login.kind);
        req.log.info({ username: u.username, kind: login.kind }, 'token issued');
        return { code: 200, expire: t.expire, token: t.token };
      },
    );
  }

  app.get(
    '/refresh_token',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'Swap a valid token for a new one of the same lifetime class',
        security: [{ bearer: [] }],
        response: { 200: TokenReply, 401: ERROR_SCHEMA },
      },
    },
    async (req) => {
      const claims = await tokens.verify(bearerToken(req));
      const u = users.get(claims.username);
      if (!u) throw AppError.unauthorized('user no longer exists');
      const t = await tokens.issue(u, claims.kind);
      return { code: 200, expire: t.expire, token: t.token };
    },
  );

  app.get(
    '/api/me',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary:
          'Who the token belongs to: user name, group, token kind and expiry (clients use it to show or hide actions)',
        security: [{ bearer: [] }],
        response: {
          200: Type.Object({
            username: Type.String(),
            group: Type.String({ enum: ['admin', 'user', 'readonly'] }),
            tokenKind: Type.String(),
            expiresMs: Type.Number(),
          }),
          401: ERROR_SCHEMA,
        },
      },
    },
    async (req) => {
      const claims = await tokens.verify(bearerToken(req));
      return {
        username: req.user!.username,
        group: req.user!.group,
        tokenKind: claims.kind,
        expiresMs: claims.expiresMs,
      };
    },
  );

  app.get(
    '/api/tokens',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'List long-lived (1 year, 15 years) tokens',
        security: [{ bearer: [] }],
        response: { 200: Type.Array(TrackedTokenSchema), 401: ERROR_SCHEMA, 403: ERROR_SCHEMA },
      },
    },
    async () => tokens.list(),
  );

  app.delete<{ Params: { id: string } }>(
    '/api/tokens/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Revoke a long-lived token (effective immediately)',
        security: [{ bearer: [] }],
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: TrackedTokenSchema, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA },
      },
    },
    async (req) => tokens.revoke(req.params.id),
  );
}
