/** GET /artifacts/{name}/{ts}/{file}: an exec run's screenshot, video or HAR (as listed in its result). */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { fileResponse } from '../../core/http/schemas.js';
import type { ArtifactStore } from '../artifacts/artifact-store.js';

export function registerArtifactRoutes(app: FastifyInstance, deps: { artifacts: ArtifactStore }): void {
  typed(app).get(
    '/artifacts/:name/:ts/:file',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: ['monitors'],
        security: [{ bearer: [] }],
        summary:
          "Download a run artifact of an exec monitor: `ts` is the run's ts and `file` one of details.artifacts[].file",
        description:
          'Only files inside the artifact folder are served; anything else is 404. Artifacts are deleted with the raw results (dataRetention).',
        params: Type.Object({
          name: Type.String({ maxLength: 128 }),
          ts: Type.String({ maxLength: 16 }),
          file: Type.String({ maxLength: 128 }),
        }),
        response: {
          200: fileResponse('the artifact (screenshot, video or HAR)', [
            'image/png',
            'video/webm',
            'application/json',
            'application/octet-stream',
          ]),
          401: ERROR_SCHEMA,
          403: ERROR_SCHEMA,
          404: ERROR_SCHEMA,
        },
      },
    },
    async (req, reply) => {
      const a = deps.artifacts.open(req.params.name, req.params.ts, req.params.file);
      return reply
        .type(a.type)
        .header('content-length', String(a.bytes))
        .header('content-disposition', `attachment; filename="${req.params.file}"`)
        .header('x-content-type-options', 'nosniff')
        .send(fs.createReadStream(a.path));
    },
  );
}
