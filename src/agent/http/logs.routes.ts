/**
 * Log tail and downloads. Names are checked by logs.ts (the agent's own `agent*.log` / `agent*.log.gz` in the log
 * folder only); a download sends exactly the size it announces.
 */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { fileResponse } from '../../core/http/schemas.js';
import { MAX_TAIL_BYTES, parseTailBytes, type LogFiles } from '../logs.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA };

export function registerLogRoutes(app: FastifyInstance, deps: { logs: LogFiles }): void {
  const tags = ['logs'];
  typed(app).get(
    '/partServerlogfile/:bytes',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: `The last N bytes of the current log (N ≥ 1; the whole file when it is shorter; at most the last ${MAX_TAIL_BYTES} bytes)`,
        security: sec,
        params: Type.Object({ bytes: Type.String({ pattern: '^[0-9]{1,16}$', example: '4096' }) }),
        response: { 200: fileResponse('the last bytes of the log', ['text/plain']), ...errs },
      },
    },
    async (req, reply) =>
      reply.type('text/plain; charset=utf-8').send(deps.logs.tail(parseTailBytes(req.params.bytes))),
  );

  const download =
    (kind: 'log' | 'gz') => async (req: { params: { filename: string } }, reply: import('fastify').FastifyReply) => {
      const f = deps.logs.open(req.params.filename, kind);
      return reply
        .type(kind === 'log' ? 'text/plain; charset=utf-8' : 'application/gzip')
        .header('content-disposition', `attachment; filename="${req.params.filename}"`)
        .header('content-length', f.size)
        .send(f.stream);
    };
  typed(app).get(
    '/discovery/logfile/server/:filename',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary:
          "Download one of the agent's log files (agent.log, agent-<suffix>.log); the monitor service's are not served",
        security: sec,
        params: Type.Object({ filename: Type.String({ maxLength: 255, example: 'agent.log' }) }),
        response: { 200: fileResponse('the log file', ['text/plain']), ...errs },
      },
    },
    download('log'),
  );
  typed(app).get(
    '/serverlogfiles/:filename',
    {
      config: { auth: 'user' },
      schema: {
        tags,
        summary: "Download one of the agent's rotated, compressed logs (agent-<stamp>-<n>.log.gz)",
        security: sec,
        params: Type.Object({ filename: Type.String({ maxLength: 255, example: 'agent.log.gz' }) }),
        response: { 200: fileResponse('the compressed log', ['application/gzip']), ...errs },
      },
    },
    download('gz'),
  );
}
