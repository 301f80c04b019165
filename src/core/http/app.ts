/**
 * The Fastify app factory both services use: HTTPS with mutual TLS, TypeBox schemas (the same schema validates the
 * request and documents it in the OpenAPI served at /docs/index.html), one error handler, string-valued bodies
 * (real JSON numbers and booleans are accepted and turned into strings before validation, as the specs write every
 * value as a string), a bearer-token guard driven by each route's `config.auth`, and HTTP metrics.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import { installErrorHandling, toErrorBody } from './error-handler.js';
import { httpsOptions, type TlsFiles } from './tls.js';
import { ANY_CASE, boundStrings, canonicalEnums } from './schemas.js';
import { serializersOnFirstUse, validatorsOnFirstUse } from './lazy-schemas.js';
import { installLazyDocs } from './docs.js';

export type AuthLevel = 'none' | 'readonly' | 'user' | 'admin' | 'cluster';

export interface AuthUser {
  username: string;
  group: 'admin' | 'user' | 'readonly';
  tokenId?: string;
  tokenKind: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Who may call the route: none (no token), readonly, user or admin (each includes the ones before it); cluster:
     * another instance of the service only, by a signed request (core/auth/peer-proof.ts), never a user's token.
     */
    auth?: AuthLevel;
  }
  interface FastifyRequest {
    user?: AuthUser;
  }
}

/**
 * The app with the TypeBox type provider: a route registered through it takes its body, params and querystring types
 * from the schemas it declares (no hand-restated types).
 */
export function typed(app: FastifyInstance) {
  return app.withTypeProvider<TypeBoxTypeProvider>();
}

export interface AppOptions {
  log: Logger;
  tls: TlsFiles;
  title: string;
  version: string;
  description: string;
  /** Largest accepted request body; larger → 413. */
  bodyLimitBytes?: number;
  /** Slow-client bounds (defaults: DEFAULT_TIMEOUTS). */
  timeouts?: Partial<HttpTimeouts>;
}

/**
 * Bounds on what a client may hold open (review F18: a slow-body connection stayed open ≥ 130 s):
 * TLS handshake and request headers must complete within `headersMs`, the whole request (headers and body) within
 * `requestMs` (Node answers 408 and closes), and a kept-alive connection with no request in flight closes after
 * `idleMs`. A handler that runs long (an exec run-now) is not cut: the bounds end when the request has arrived.
 */
export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
  idleMs: number;
}
export const DEFAULT_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000, idleMs: 10_000 };

function serverTimeouts(t: Partial<HttpTimeouts> = {}) {
  const requestMs = t.requestMs ?? DEFAULT_TIMEOUTS.requestMs;
  const headersMs = Math.min(t.headersMs ?? DEFAULT_TIMEOUTS.headersMs, requestMs);
  return {
    handshakeTimeout: headersMs,
    headersTimeout: headersMs,
    requestTimeout: requestMs,
    keepAliveTimeout: t.idleMs ?? DEFAULT_TIMEOUTS.idleMs,
    // How often Node checks the header and request bounds (its default, 30 s, would let a connection overstay).
    connectionsCheckingInterval: Math.min(1000, Math.ceil(headersMs / 4)),
  };
}

/**
 * Ajv's options for request validation. useDefaults false: a schema's `default` documents what the service applies
 * (on create); Ajv must not write it into request bodies, where it would overwrite stored values on a partial update.
 * OpenAPI 3.0's `example` documents a schema (and seeds the contract test's requests); Ajv ignores it.
 */
export const AJV_OPTIONS: {
  removeAdditional: false;
  coerceTypes: false;
  allErrors: false;
  useDefaults: false;
  keywords: string[];
} = {
  removeAdditional: false,
  coerceTypes: false,
  allErrors: false,
  useDefaults: false,
  keywords: ['example', ANY_CASE],
};

/** Turns number and boolean values of a flat JSON body into strings (the spec's string-typed values). */
export function stringifyScalars(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    out[k] = typeof v === 'number' || typeof v === 'boolean' ? String(v) : v;
  }
  return out;
}

/**
 * JSON bodies through Fastify's own parser (prototype-poisoning checks kept), except that an empty body (or only
 * whitespace) with `Content-Type: application/json` is a request without a body: routes that take none accept it,
 * routes that need one answer 400 naming `body` (issue 14 §2).
 */
function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (/^\s*$/.test(body as string)) {
      done(null, undefined);
      return;
    }
    // The default parser answers through done (its type also allows a promise-returning parser).
    void parseJson(req, body as string, done);
  });
}

export async function createApp(opts: AppOptions): Promise<FastifyInstance> {
  const timeouts = serverTimeouts(opts.timeouts);
  const fastifyOpts: FastifyServerOptions & { https: ReturnType<typeof httpsOptions> } = {
    loggerInstance: opts.log,
    // Node's https.createServer takes the http server options too (headersTimeout, connectionsCheckingInterval).
    https: { ...httpsOptions(opts.tls), ...timeouts },
    requestTimeout: timeouts.requestTimeout,
    keepAliveTimeout: timeouts.keepAliveTimeout,
    bodyLimit: opts.bodyLimitBytes ?? 1024 * 1024,
    logController: new LogController({ disableRequestLogging: true }),
    // Validators and serializers compile at their route's first use, not while the app gets ready (lazy-schemas.ts).
    ajv: { customOptions: AJV_OPTIONS },
    schemaController: {
      compilersFactory: { buildValidator: validatorsOnFirstUse, buildSerializer: serializersOnFirstUse },
    },
    return503OnClosing: true,
    // Plugins register in ms on a quiet machine; avvio's default of 10 s failed a clean-clone CI run at load ≈ 17
    // (@fastify/swagger-ui did not start in time). A start that takes this long is reported, not hung.
    pluginTimeout: 120_000,
    // Errors Fastify raises before routing (a malformed URL, an over-long parameter) get the same body as all others.
    frameworkErrors: (err, _req, reply) => {
      const { status, body } = toErrorBody(err);
      const r = reply as unknown as FastifyReply;
      if (status >= 500) void r.code(400).send({ code: 400, error: 'BAD_REQUEST', message: 'malformed request' });
      else void r.code(status).send(body);
    },
    forceCloseConnections: 'idle',
  };
  const app = Fastify(
    fastifyOpts as FastifyServerOptions,
  ).withTypeProvider<TypeBoxTypeProvider>() as unknown as FastifyInstance;
  installErrorHandling(app);
  // Only JSON bodies are accepted: text/plain and other types answer 415.
  app.removeContentTypeParser('text/plain');
  installJsonParser(app);
  // Routes with a body accept numbers and booleans for the spec's string values (hook only where there is a body).
  app.addHook('onRoute', (route) => {
    // Every request string has a maxLength and every array a maxItems (issue 13 item 10): the schema's own, or the
    // documented defaults. Runs before the docs' route recorder, so the OpenAPI shows the bounds.
    for (const part of ['body', 'params', 'querystring'] as const) boundStrings(route.schema?.[part]);
    if (!route.schema?.body) return;
    const coerce = (req: { body: unknown }, _reply: unknown, done: () => void) => {
      if (req.body !== undefined) req.body = stringifyScalars(req.body);
      canonicalEnums(req.body, route.schema?.body);
      done();
    };
    const existing = route.preValidation;
    route.preValidation = existing ? [coerce, ...(Array.isArray(existing) ? existing : [existing])] : [coerce];
  });
  // The OpenAPI document and its UI are built at the first /docs request (docs.ts).
  installLazyDocs(app, { title: opts.title, version: opts.version, description: opts.description });
  return app;
}
