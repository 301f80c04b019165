/**
 * The API documentation (/docs: the Swagger UI, /docs/index.html and its OpenAPI JSON), built at its first request.
 * The service's app only records its routes (one onRoute hook) and forwards /docs requests; the first one builds a
 * small Fastify instance that holds @fastify/swagger and @fastify/swagger-ui (with yaml, @fastify/static, the
 * UI's files) and the recorded routes, each with its schema and config but a handler that is never called: the
 * document is generated from exactly what the service registered, by the same plugins with the same options. None
 * of that is loaded by a service nobody asks for its docs (≈ 4 MB of the agent's idle RSS, docs/benchmarks.md).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

export interface DocsInfo {
  title: string;
  version: string;
  description: string;
}

/** What the OpenAPI generator reads of a route (@fastify/swagger: method, url, schema, config; no route has links). */
type RecordedRoute = Pick<RouteOptions, 'method' | 'url' | 'schema' | 'config'>;

/** Response headers the forwarding reply sets itself. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

async function buildDocsApp(info: DocsInfo, routes: RecordedRoute[]): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('fastify'),
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  // No validation or serialisation happens here: the compilers are never built.
  const noCompile = { buildValidator: () => () => () => true, buildSerializer: () => () => JSON.stringify } as never;
  const docs = Fastify({ schemaController: { compilersFactory: noCompile } });
  await docs.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: info.title, version: info.version, description: info.description },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          // Requests between a cluster's members (auth: 'cluster'; core/auth/peer-proof.ts).
          peerProof: { type: 'apiKey', in: 'header', name: 'X-Sentinel-Peer-Proof' },
        },
      },
    },
  });
  await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  const unused = async () => undefined;
  for (const r of routes) {
    docs.route({ ...r, handler: unused });
  }
  await docs.ready();
  return docs;
}

/**
 * Records the app's routes and registers /docs, /docs/* (the UI and its assets), /docs/index.html (the spec's path
 * of the UI page, which asks for `<its URL>/json`) and /docs/index.html/json, all without a token and hidden from
 * the document. Call before the service's routes are registered.
 */
export function installLazyDocs(app: FastifyInstance, info: DocsInfo): void {
  const routes: RecordedRoute[] = [];
  app.addHook('onRoute', (route) => {
    // @fastify/swagger leaves out HEAD routes (Fastify adds one per GET) and hidden ones (the docs routes below).
    if (route.method === 'HEAD' || route.schema?.hide) return;
    routes.push({ method: route.method, url: route.url, schema: route.schema, config: route.config });
  });
  let docsApp: Promise<FastifyInstance> | undefined;
  const docs = () => {
    if (docsApp) return docsApp;
    const building = buildDocsApp(info, routes);
    // A failed build is retried by the next request (the handler is attached once, where the promise is made).
    building.catch(() => {
      if (docsApp === building) docsApp = undefined;
    });
    return (docsApp = building);
  };
  const forward = async (url: string, req: FastifyRequest, reply: FastifyReply) => {
    const res = await (
      await docs()
    ).inject({ method: req.method, url, headers: req.headers as Record<string, string> });
    for (const [k, v] of Object.entries(res.headers)) if (!HOP_HEADERS.has(k) && v !== undefined) reply.header(k, v);
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  const opts = { schema: { hide: true }, config: { auth: 'none' as const } };
  app.get('/docs', opts, (req, reply) => forward(req.url, req, reply));
  app.get('/docs/*', opts, (req, reply) => forward(req.url, req, reply));
  app.get('/docs/index.html', opts, async (req, reply) => {
    const page = await (await docs()).inject({ method: 'GET', url: '/docs/' });
    return reply.type('text/html; charset=utf-8').send(page.body);
  });
  app.get('/docs/index.html/json', opts, (req, reply) => forward('/docs/json', req, reply));
}

/** The app's OpenAPI document (what GET /docs/index.html/json answers). */
export async function openApiDocument(app: FastifyInstance): Promise<Record<string, unknown>> {
  const r = await app.inject({ method: 'GET', url: '/docs/index.html/json' });
  if (r.statusCode !== 200) throw new Error(`GET /docs/index.html/json answered ${r.statusCode}`);
  return r.json();
}
