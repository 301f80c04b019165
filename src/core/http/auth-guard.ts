/**
 * The one place permissions are enforced. Each route declares `config: { auth: 'none' | 'readonly' | 'user' |
 * 'admin' | 'cluster' }`; a route that declares nothing requires admin (secure default), except the OpenAPI UI under
 * /docs. Groups are ordered readonly < user < admin: a route open to `user` is open to admins too.
 * Missing, malformed, expired, tampered or revoked token → 401; a group below the route's level → 403.
 * `cluster`: only another instance of the service, by a peer proof (peer-proof.ts): a missing proof → 401, or 403
 * when a user's token came instead (no group is enough); an invalid proof → 401. Without a PeerProof: always 403.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { TokenService } from '../auth/tokens.js';
import type { PeerProof } from '../auth/peer-proof.js';
import { GROUP_RANK, type UserService } from '../auth/users.service.js';
import type { AuthLevel } from './app.js';

const LEVEL_RANK: Record<Exclude<AuthLevel, 'none' | 'cluster'>, number> = { readonly: 0, user: 1, admin: 2 };

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

/** A `cluster` route: passes a valid peer proof for this very request, throws otherwise. */
function checkPeer(req: FastifyRequest, peers: PeerProof | undefined): void {
  if (!peers) throw AppError.forbidden('only another instance of this service may call this (no cluster here)');
  const why = peers.checkRequest(req);
  if (why === undefined) return;
  if (why === 'missing' && req.headers.authorization) {
    throw AppError.forbidden('only another instance of this service may call this: no user group is enough');
  }
  throw AppError.unauthorized(`a signed request from a cluster member is needed (peer proof ${why})`);
}

export function installAuthGuard(
  app: FastifyInstance,
  tokens: TokenService,
  users: UserService,
  peers?: PeerProof,
): void {
  app.decorateRequest('user', undefined);
  app.addHook('onRequest', async (req) => {
    const level = routeAuthLevel(req);
    if (level === undefined || level === 'none') return;
    if (level === 'cluster') return checkPeer(req, peers);
    const claims = await tokens.verify(bearerToken(req));
    const u = users.get(claims.username);
    if (!u) throw AppError.unauthorized('user no longer exists');
    req.user = { username: u.username, group: u.group, tokenId: claims.jti, tokenKind: claims.kind };
    if (GROUP_RANK[u.group] < LEVEL_RANK[level]) {
      throw AppError.forbidden(`this call needs the ${level} group or higher; you are ${u.group}`);
    }
  });
}
