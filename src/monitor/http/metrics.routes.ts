/** GET /api/metrics: Prometheus text exposition (no token; mTLS still applies): host, process, HTTP, per-monitor. */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';

export function registerMetricsRoute(app: FastifyInstance, registry: Registry): void {
  app.get(
    '/api/metrics',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['utilities'],
        summary:
          'Metrics in the Prometheus text format: host gauges (sentinel_host_*: CPU %, memory, swap, load 1/5/15, uptime, disk usage per mount), process and HTTP figures, and per-monitor gauges (last status, response time, certificate days left, thresholds)',
        produces: ['text/plain'],
      },
    },
    async (_req, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
}
