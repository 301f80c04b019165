/**
 * The discovery agents the monitor service asks about failing targets (docs/alerting.md "Enrichment"): readonly users
 * list them (never the token or the CA), only admins register, change and delete them — a registered agent is a URL
 * the service calls with a credential, so choosing one is an admin's decision (docs/security.md §20).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { MAX } from '../../core/http/schemas.js';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { AgentRegistry } from '../agents/agent-registry.js';
import type { Enricher } from '../agents/enricher.service.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA, 409: ERROR_SCHEMA };
const Params = Type.Object({ name: Type.String({ maxLength: 64 }) });
const Agent = Type.Object({
  name: Type.String(),
  url: Type.String({ description: 'https origin of the agent' }),
  hosts: Type.Array(Type.String(), { description: 'host names and addresses matched against monitor targets' }),
  tokenSet: Type.Boolean({ description: 'a component token is stored (it is never returned)' }),
  caCertSet: Type.Boolean({ description: 'a CA was given (else the service trusts its own CA)' }),
  updatedMs: Type.Number(),
  updatedBy: Type.Optional(Type.String()),
});
const Body = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: MAX.text, example: 'https://db-1.example:8070' })),
    hosts: Type.Optional(Type.Array(Type.String({ maxLength: 253 }), { maxItems: 50, example: ['db-1', '10.0.0.5'] })),
    token: Type.Optional(
      Type.String({
        maxLength: 8192,
        description:
          "the agent's component token (POST /loginComponent1Year or /loginComponent15Years on the agent); write-only, " +
          'sealed at rest; required when creating and whenever url changes',
      }),
    ),
    caCert: Type.Optional(
      Type.String({
        maxLength: MAX.pem,
        description: "PEM CA the agent's certificate must chain to (write-only; '' = the service's own CA)",
      }),
    ),
  },
  { additionalProperties: false },
);
const Done = Type.Object({ code: Type.Integer(), message: Type.String() });
const N = Type.Number();
const Enrichment = Type.Object({
  v: Type.Integer(),
  monitor: Type.String(),
  ts: Type.Number({ description: "the run's result time (Unix ms), as in its history row" }),
  atMs: Type.Number({ description: 'when the agent answered' }),
  agent: Type.String(),
  host: Type.String(),
  port: Type.Integer(),
  status: Type.String({ description: "the run's status" }),
  listening: Type.Optional(Type.Boolean({ description: 'false: nothing listens on the port' })),
  process: Type.Optional(
    Type.Object({
      listening: Type.Boolean(),
      pid: Type.Union([N, Type.Null()]),
      name: Type.Optional(Type.String()),
      user: Type.Optional(Type.String()),
      cpuPct: Type.Optional(N),
      rssBytes: Type.Optional(N),
      memPct: Type.Optional(N),
      startTimeMs: Type.Optional(N),
      restarted: Type.Optional(Type.Boolean({ description: 'another process than at the previous lookup' })),
    }),
  ),
  previous: Type.Optional(
    Type.Object(
      { name: Type.Optional(Type.String()), pid: Type.Union([N, Type.Null()]), seenMs: N },
      { description: 'who listened on the port at the previous lookup' },
    ),
  ),
  hostLoad: Type.Optional(Type.Object({ cpuPct: N, memUsedPct: N, load1: N })),
  error: Type.Optional(Type.String({ description: 'why the agent gave no answer' })),
  summary: Type.String({ description: 'the one line alerts carry' }),
});

export function registerAgentRoutes(app: FastifyInstance, deps: { agents: AgentRegistry; enricher: Enricher }): void {
  const tags = ['agents'];
  app.get(
    '/agents',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'Registered discovery agents (no secrets)',
        security: sec,
        response: { 200: Type.Array(Agent), ...errs },
      },
    },
    async () => deps.agents.list(),
  );
  app.get<{ Params: { name: string } }>(
    '/agents/:name',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'One registered agent (no secrets)',
        security: sec,
        params: Params,
        response: { 200: Agent, ...errs },
      },
    },
    async (req) => deps.agents.get(req.params.name),
  );
  app.post<{ Params: { name: string }; Body: { url?: string; hosts?: string[]; token?: string; caCert?: string } }>(
    '/agents/:name',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Register (201) or change (200) an agent. url, hosts and token are required to register; a change of url ' +
          'must supply token again (400 otherwise); a host belongs to one agent (409)',
        security: sec,
        params: Params,
        body: Body,
        response: { 200: Agent, 201: Agent, ...errs },
      },
    },
    async (req, reply) => {
      const r = await deps.agents.put(req.params.name, req.body, req.user?.username);
      return reply.code(r.created ? 201 : 200).send(r.view);
    },
  );
  app.delete<{ Params: { name: string } }>(
    '/agents/:name',
    {
      config: { auth: 'admin' },
      schema: { tags, summary: 'Delete an agent', security: sec, params: Params, response: { 200: Done, ...errs } },
    },
    async (req) => {
      await deps.agents.remove(req.params.name);
      return { code: 200, message: `agent ${req.params.name} deleted` };
    },
  );
  app.get<{ Params: { name: string }; Querystring: { limit?: string } }>(
    '/enrichments/:name',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary:
          "What the discovery agent of a monitor's target host found on its failing runs (newest first): who listens " +
          'on the port, or nobody, and the host load',
        security: sec,
        params: Type.Object({ name: Type.String({ maxLength: 128 }) }),
        querystring: Type.Object({
          limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-4][0-9]|50)$', description: '1-50, default 20' })),
        }),
        response: { 200: Type.Array(Enrichment), ...errs },
      },
    },
    async (req) => deps.enricher.recent(req.params.name, Number(req.query.limit ?? 20)),
  );
}
