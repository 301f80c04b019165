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
import { lifetimeText } from './token-kinds.js';
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
  replacedBy: Type.Optional(Type.String({ description: 'the token that a refresh issued in its place' })),
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
          description: `Token lifetime ${lifetimeText(spec)}.${spec.adminOnly ? ' Admins only (403 otherwise).' : ''}${spec.tracked ? ' The token has an id and can be listed and revoked under /api/tokens.' : ''} Attempts are counted before the password is checked: 10 for a user name from one address, 30 from one address, or 100 for one name from all addresses within 5 minutes block that key for 30 s (429).`,
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
        summary: 'Swap a valid token for a new one of the same kind; the old one stops working 30 s later',
        description:
          'Rotation: the new token keeps the time of the original login, so refreshing never goes past the ' +
          "kind's longest session (monitor /login: 7 days; agent 15-minute tokens: 12 h; the others: their own " +
          'lifetime), then 401 and a new login. Admin-only kinds need the admin group still (403). The old token ' +
          'keeps working 30 s for requests already in flight, then 401.',
        security: [{ bearer: [] }],
        response: { 200: TokenReply, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA },
      },
    },
    async (req) => {
      const claims = await tokens.verify(bearerToken(req));
      const u = users.get(claims.username);
      if (!u) throw AppError.unauthorized('user no longer exists');
      if (tokens.kinds[claims.kind]!.adminOnly && u.group !== 'admin') {
        throw AppError.forbidden(`only admins may hold ${claims.kind} tokens`);
      }
      const t = await tokens.refresh(claims, u);
      req.log.info({ username: u.username, kind: claims.kind }, 'token refreshed');
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
        summary: 'List the tracked tokens (long-lived kinds: monitor 60 days, 1 year, 15 years; agent 1 and 15 years)',
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
        summary: 'Revoke a tracked token (effective immediately)',
        security: [{ bearer: [] }],
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: TrackedTokenSchema, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA },
      },
    },
    async (req) => tokens.revoke(req.params.id),
  );
}
