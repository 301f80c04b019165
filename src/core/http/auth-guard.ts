/**
 * The one place permissions are enforced. Each route declares `config: { auth: 'none' | 'readonly' | 'user' |
 * 'admin' }`; a route that declares nothing requires admin (secure default), except the OpenAPI UI under /docs.
 * Groups are ordered readonly < user < admin: a route open to `user` is open to admins too.
 * Missing, malformed, expired, tampered or revoked token → 401; a group below the route's level → 403.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { TokenService } from '../auth/tokens.js';
import { GROUP_RANK, type UserService } from '../auth/users.service.js';
import type { AuthLevel } from './app.js';

const LEVEL_RANK: Record<Exclude<AuthLevel, 'none'>, number> = { readonly: 0, user: 1, admin: 2 };

export function routeAuthLevel(req: FastifyRequest): AuthLevel | undefined {
  const url = req.routeOptions.url;
  if (url === undefined) return undefined; // unknown route: the 404 handler answers
  return req.routeOptions.config.auth ?? (url.startsWith('/docs') ? 'none' : 'admin');
}

export function bearerToken(req: FastifyRequest): string {
  const h = req.headers.authorization;
  if (!h) throw AppError.unauthorized('missing Authorization: Bearer token');
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  if (!m) throw AppError.unauthorized('Authorization header must be Bearer <token>');
  return m[1]!;
}

export function installAuthGuard(app: FastifyInstance, tokens: TokenService, users: UserService): void {
  app.decorateRequest('user', undefined);
  app.addHook('onRequest', async (req) => {
    const level = routeAuthLevel(req);
    if (level === undefined || level === 'none') return;
    const claims = await tokens.verify(bearerToken(req));
    const u = users.get(claims.username);
    if (!u) throw AppError.unauthorized('user no longer exists');
    req.user = { username: u.username, group: u.group, tokenId: claims.jti, tokenKind: claims.kind };
    if (GROUP_RANK[u.group] < LEVEL_RANK[level]) {
      throw AppError.forbidden(`this call needs the ${level} group or higher; you are ${u.group}`);
    }
  });
}
