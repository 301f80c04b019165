/** GET /certificates (readonly and up): the certificate inventory, soonest expiry first (docs/checks-http.md). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { CertInventory } from '../certificates/cert-inventory.js';

const CertOut = Type.Object({
  fingerprint256: Type.String({ description: 'SHA-256 fingerprint, AA:BB:…' }),
  subject: Type.Optional(Type.String({ description: 'subject common name' })),
  sans: Type.Optional(Type.Array(Type.String(), { description: 'subjectAltName DNS names and addresses' })),
  issuer: Type.Optional(Type.String({ description: 'issuer common name' })),
  keyType: Type.Optional(Type.String({ description: 'RSA 2048, EC prime256v1, …' })),
  serialNumber: Type.Optional(Type.String()),
  validFromMs: Type.Number(),
  validToMs: Type.Number(),
  daysLeft: Type.Number({ description: 'days until expiry, one decimal; negative once expired' }),
  level: Type.String({
    enum: ['OK', 'MINOR', 'MAJOR', 'CRITICAL'],
    description: 'as for url: < 30 d MINOR, < 14 d MAJOR, < 7 d or expired CRITICAL',
  }),
  monitors: Type.Array(
    Type.Object({
      name: Type.String(),
      type: Type.String(),
      sched: Type.String({ description: "the monitor's sched (for its page and API paths)" }),
      host: Type.String(),
      lastSeenMs: Type.Number(),
    }),
  ),
  firstSeenMs: Type.Number(),
  lastSeenMs: Type.Number(),
});

export function registerCertificateRoutes(
  app: FastifyInstance,
  deps: { certs: CertInventory; now: () => number; schedOf: (name: string) => string | undefined },
): void {
  app.get<{ Querystring: { withinDays?: string } }>(
    '/certificates',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: ['monitors'],
        summary: 'Every certificate the checks see (url, api, tcp with tls), soonest expiry first, with its monitors',
        security: [{ bearer: [] }],
        querystring: Type.Object({
          withinDays: Type.Optional(
            Type.String({ pattern: '^[0-9]{1,5}$', description: 'only certificates expiring within N days' }),
          ),
        }),
        response: { 200: Type.Array(CertOut), 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA },
      },
    },
    async (req) => {
      const within = req.query.withinDays;
      const all = deps.certs.list(deps.now()).filter((c) => within === undefined || c.daysLeft < Number(within));
      // A record of a monitor that is gone (one a run recorded after its deletion, before that was dropped) is not
      // listed, nor a certificate only such records present. The start-up sweep deletes such records; this still hides
      // one that appears between starts (a delete that failed, a cluster member that recorded a run before following
      // the monitor's deletion) and the instant before a monitor's deletion reaches the inventory.
      return all.flatMap((c) => {
        const monitors = c.monitors.flatMap((m) => {
          const sched = deps.schedOf(m.name);
          return sched === undefined ? [] : [{ ...m, sched }];
        });
        return monitors.length > 0 ? [{ ...c, monitors }] : [];
      });
    },
  );
}
