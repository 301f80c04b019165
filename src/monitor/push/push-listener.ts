/**
 * The push listener (PUSH_PORT, docs/checks-push.md): a second HTTPS server for jobs that cannot hold a client
 * certificate. It presents the service's server certificate (swapped with the main port's by GET
 * /reloadCertificates), asks for no client certificate, and serves the push ping routes only — no API, no docs, no dashboard: everything else is 404. Its own bounds: ping bodies ≤ 10 KiB,
 * the main service's request timeouts, no request logging (a URL holds a token).
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { AJV_OPTIONS } from '../../core/http/app.js';
import { installErrorHandling } from '../../core/http/error-handler.js';
import { readTlsFiles } from '../../core/http/tls.js';
import { PING_BODY_LIMIT, registerPushRoutes } from '../http/push.routes.js';
import type { PushService } from './push.service.js';

export interface PushListener {
  app: FastifyInstance;
  /** Listens; resolves the base URL (https://127.0.0.1:<port>). */
  listen(): Promise<string>;
  port(): number | null;
  /** Re-reads the server certificate (after GET /reloadCertificates); connections in flight keep theirs. */
  reload(): void;
  close(): Promise<void>;
}

export function createPushListener(o: {
  certDir: string;
  port: number;
  host: string;
  requestTimeoutMs: number;
  log: Logger;
  push: PushService;
}): PushListener {
  const { key, cert } = readTlsFiles(o.certDir);
  const headersMs = Math.min(10_000, o.requestTimeoutMs);
  const app = Fastify({
    loggerInstance: o.log,
    logController: new LogController({ disableRequestLogging: true }),
    https: {
      key,
      cert,
      minVersion: 'TLSv1.2',
      handshakeTimeout: headersMs,
      headersTimeout: headersMs,
      requestTimeout: o.requestTimeoutMs,
      connectionsCheckingInterval: 1000,
    } as never,
    requestTimeout: o.requestTimeoutMs,
    keepAliveTimeout: 10_000,
    bodyLimit: PING_BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: AJV_OPTIONS },
    frameworkErrors: (_err, _req, reply) =>
      void (reply as unknown as FastifyReply)
        .code(400)
        .send({ code: 400, error: 'BAD_REQUEST', message: 'malformed request' }),
  }) as unknown as FastifyInstance;
  installErrorHandling(app);
  registerPushRoutes(app, { push: o.push });
  let bound: number | null = null;
  return {
    app,
    async listen() {
      await app.listen({ port: o.port, host: o.host });
      const addr = app.server.address();
      bound = typeof addr === 'object' && addr ? addr.port : o.port;
      return `https://127.0.0.1:${bound}`;
    },
    port: () => bound,
    reload() {
      const files = readTlsFiles(o.certDir);
      (app.server as import('node:https').Server).setSecureContext({
        key: files.key,
        cert: files.cert,
        minVersion: 'TLSv1.2',
      });
    },
    close: () => app.close(),
  };
}
