/**
 * Probes for supervisors (systemd, Kubernetes, load balancers), on both services, without a bearer token (mutual TLS
 * still applies at the handshake). Minimal information: status and the names of failing parts, never error text.
 *
 *   GET /healthz  liveness: the process answers and its event loop lag (max over the last interval) is below a bound
 *   GET /readyz   readiness: every named check passes (store reachable, scheduler running, certificates valid,
 *                 migrations done, not shutting down); 503 naming the failing ones otherwise
 */
import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { KvStore } from '../storage/kv-store.js';
import { CERT_FILES } from '../pki/certs.js';
import { META_BUCKET, FORMAT_KEY } from '../storage/migrations.js';

/** A readiness check: resolves true when that part is ready. Thrown errors and timeouts count as not ready. */
export type ReadyCheck = () => boolean | Promise<boolean>;

export interface HealthDeps {
  checks: Record<string, ReadyCheck>;
  /** Liveness fails when the event loop lagged more than this (default 5000 ms). */
  maxLagMs?: number;
  /** Per-check time limit (default 2000 ms). */
  checkTimeoutMs?: number;
}

const Check = Type.Union([Type.Literal('ok'), Type.Literal('fail')]);
const Ready = Type.Object({
  status: Check,
  failing: Type.Array(Type.String(), { description: 'names of the checks that failed' }),
  checks: Type.Record(Type.String(), Check),
});
const Live = Type.Object({
  status: Check,
  eventLoopLagMs: Type.Number({ description: 'max event loop delay over the last sampling window' }),
});

/** The store answers a read of its format record. */
export const storeCheck =
  (store: KvStore): ReadyCheck =>
  async () =>
    (await store.bucket(META_BUCKET).get(FORMAT_KEY)) !== undefined;

/** The server certificate in certDir parses and is inside its validity period. */
export const certificateCheck =
  (certDir: string, now: () => number = Date.now): ReadyCheck =>
  () => {
    const x = new X509Certificate(fs.readFileSync(path.join(certDir, CERT_FILES.server)));
    return Date.parse(x.validFrom) <= now() && now() < Date.parse(x.validTo);
  };

function withTimeout(check: ReadyCheck, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    Promise.resolve()
      .then(check)
      .then(
        (ok) => resolve(ok === true),
        () => resolve(false),
      )
      .finally(() => clearTimeout(t));
  });
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  const tags = ['utilities'];
  const maxLagMs = deps.maxLagMs ?? 5000;
  const timeoutMs = deps.checkTimeoutMs ?? 2000;
  // A stall is seconds long (the bound is 5 s): a 500 ms timer sees it, at 2 wake-ups a second (perf_hooks'
  // monitorEventLoopDelay woke 50 times a second, and its reset() forgot a stall not yet recorded). The lag is the
  // largest lateness of the timer over the last 5–10 s, or the stall going on now (time since its last tick).
  const periodMs = 500;
  let lastTick = performance.now();
  let windowStart = lastTick;
  let windowMax = 0;
  let previousMax = 0;
  const sampler = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - lastTick - periodMs);
    lastTick = now;
    if (now - windowStart >= 5000) {
      previousMax = windowMax;
      windowMax = 0;
      windowStart = now;
    }
    windowMax = Math.max(windowMax, late);
  }, periodMs);
  sampler.unref();
  app.addHook('onClose', async () => clearInterval(sampler));
  const current = () => Math.max(previousMax, windowMax, performance.now() - lastTick - periodMs, 0);

  app.get(
    '/healthz',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: 'Liveness: the process answers and its event loop is not stalled (503 when it lags past the bound)',
        response: { 200: Live, 503: Live },
      },
    },
    async (_req, reply) => {
      const lag = Math.round(current());
      const ok = lag <= maxLagMs;
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'fail', eventLoopLagMs: lag });
    },
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'none' },
      schema: {
        tags,
        summary: `Readiness: ${Object.keys(deps.checks).join(', ')} (503 naming the failing checks)`,
        response: { 200: Ready, 503: Ready },
      },
    },
    async (req, reply) => {
      const names = Object.keys(deps.checks);
      const results = await Promise.all(names.map((n) => withTimeout(deps.checks[n]!, timeoutMs)));
      const checks: Record<string, 'ok' | 'fail'> = {};
      names.forEach((n, i) => (checks[n] = results[i] ? 'ok' : 'fail'));
      const failing = names.filter((n) => checks[n] === 'fail');
      if (failing.length > 0) req.log.warn({ failing }, 'not ready');
      return reply
        .code(failing.length === 0 ? 200 : 503)
        .send({ status: failing.length === 0 ? 'ok' : 'fail', failing, checks });
    },
  );
}
