/** Health, certificate download and reload, uptime: the utility endpoints both services share. */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { CERT_FILES } from '../pki/certs.js';
import { ERROR_SCHEMA } from './error-handler.js';
import { reloadCertificates } from './tls.js';

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${d}d ${h}h ${m}m ${s % 60}s`;
}

export function registerOpsRoutes(
  app: FastifyInstance,
  deps: {
    certDir: string;
    startedMs: number;
    uptime?: boolean;
    now?: () => number;
    /** Other listeners that present the same server certificate (the monitor's push listener): reloaded after it. */
    onCertificatesReloaded?: () => void;
  },
): void {
  const tags = ['utilities'];
  const now = deps.now ?? Date.now;
  app.get(
    '/ping',
    {
      config: { auth: 'none' },
      schema: { tags, summary: 'Health check', response: { 200: Type.Object({ message: Type.String() }) } },
    },
    async () => ({ message: 'pong' }),
  );

  app.get(
    '/getCert',
    {
      config: { auth: 'none' },
      schema: { tags, summary: 'Download the public server certificate (PEM)', produces: ['application/x-pem-file'] },
    },
    async (_req, reply) => {
      const pem = fs.readFileSync(path.join(deps.certDir, CERT_FILES.server));
      return reply
        .type('application/x-pem-file')
        .header('content-disposition', 'attachment; filename="server.pem"')
        .send(pem);
    },
  );

  app.get(
    '/reloadCertificates',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Re-read the certificates folder and swap the TLS context (connections in flight are kept)',
        security: [{ bearer: [] }],
        response: {
          200: Type.Object({
            code: Type.Integer(),
            message: Type.String(),
            subject: Type.String(),
            notAfter: Type.String(),
          }),
          400: ERROR_SCHEMA,
          401: ERROR_SCHEMA,
          403: ERROR_SCHEMA,
        },
      },
    },
    async () => {
      const info = reloadCertificates(app.server as import('node:https').Server, deps.certDir);
      deps.onCertificatesReloaded?.();
      app.log.info(info, 'certificates reloaded');
      return { code: 200, message: 'certificates reloaded', ...info };
    },
  );

  if (deps.uptime !== false) {
    app.get(
      '/uptime',
      {
        config: { auth: 'readonly' },
        schema: {
          tags,
          summary: 'Service uptime',
          security: [{ bearer: [] }],
          response: {
            200: Type.Object({
              startedMs: Type.Number(),
              uptimeMs: Type.Number(),
              uptime: Type.String({ description: 'e.g. 1d 2h 3m 4s' }),
            }),
            401: ERROR_SCHEMA,
          },
        },
      },
      async () => {
        const uptimeMs = now() - deps.startedMs;
        return { startedMs: deps.startedMs, uptimeMs, uptime: formatDuration(uptimeMs) };
      },
    );
  }
}
