/**
 * The push-monitor ping routes (docs/checks-push.md): GET or POST `/push/{token}` (success), `/push/{token}/start`,
 * `/push/{token}/fail`, `/push/{token}/{exit code}` with an optional text body (the job's message, any content type,
 * at most PING_BODY_LIMIT bytes, else 413). The token is the credential (auth `none`): registered on the main port
 * (behind its client certificate) and, with PUSH_PORT, alone on the push listener (push/push-listener.ts). Unknown
 * token → 404, too many pings → 429 with Retry-After. In a cluster the ping is sent on to the monitor's lease holder;
 * on the main port (client certificate required) a ping another instance forwarded (FORWARDED_HEADER with a valid
 * peer proof) is handled here; the header without the proof is ignored, and the push listener ignores it always.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { PushService } from '../push/push.service.js';
import type { PeerProof } from '../../core/auth/peer-proof.js';
import { forwardedByPeer } from '../cluster/cluster-client.js';

/** Largest ping body (the job's message; the first 1,000 characters are kept). */
export const PING_BODY_LIMIT = 10 * 1024;

const Token = Type.String({
  maxLength: 128,
  pattern: '^[A-Za-z0-9_-]{1,128}$',
  description: "the monitor's push token (from the create answer or a rotation)",
  example: 'kM3p0c8qY3E2m5Jx0o9vQm7sQ0yZ4uHq5cFv1bNn2aA',
});
const Signal = Type.String({
  maxLength: 7,
  pattern: '^(start|fail|success|[0-9]{1,3})$',
  description:
    'start: the job began (its duration is measured to the next success); fail or a non-zero exit code ' +
    '(1-255): the job failed (DOWN with the body as message); success or 0: the job succeeded',
  example: 'start',
});
const PingOk = Type.Object({ code: Type.Integer(), message: Type.String() });
const errs = { 400: ERROR_SCHEMA, 404: ERROR_SCHEMA, 413: ERROR_SCHEMA, 429: ERROR_SCHEMA };

export function registerPushRoutes(
  app: FastifyInstance,
  deps: {
    push: PushService;
    /** The main port: a ping another member forwarded, with its proof, is handled here (`forwardedByPeer`). */
    peers?: PeerProof;
  },
): void {
  void app.register(async (sub) => {
    // A job sends whatever its shell sends (curl -d: form encoding; --data-binary: anything): the body is text.
    sub.removeAllContentTypeParsers();
    sub.addContentTypeParser('*', { parseAs: 'string', bodyLimit: PING_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    for (const method of ['GET', 'POST'] as const) {
      for (const withSignal of [false, true]) {
        const url = withSignal ? '/push/:token/:signal' : '/push/:token';
        sub.route<{ Params: { token: string; signal?: string } }>({
          method,
          url,
          config: { auth: 'none' },
          bodyLimit: PING_BODY_LIMIT,
          schema: {
            tags: ['push'],
            summary: withSignal
              ? 'Push monitor ping with a signal (start, fail, exit code)'
              : 'Push monitor ping: success',
            description:
              'Called by the monitored job. The token is the credential (no bearer token). On the PUSH_PORT listener ' +
              'no client certificate is needed. Body (optional, any content type, ≤ 10 KiB): the job message.',
            params: Type.Object(withSignal ? { token: Token, signal: Signal } : { token: Token }),
            response: { 200: PingOk, ...errs },
          },
          handler: async (req) =>
            deps.push.ping(req.params.token, req.params.signal, req.body, forwardedByPeer(req, deps.peers)),
        });
      }
    }
  });
}
