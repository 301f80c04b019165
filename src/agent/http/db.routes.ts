/** Database reads and maintenance. */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import type { AgentDb } from '../db.js';

import { BACKUP, DB_ALL, DB_ENTRY, DB_STATS, errs, REINIT, sec } from './schemas.js';

const BucketParam = Type.String({
  maxLength: 64,
  description: 'METRICS, THRESHOLDS, STATUS or STATUS_HISTORY (another name: 404)',
  example: 'STATUS',
});

export function registerDbRoutes(app: FastifyInstance, deps: { db: AgentDb }): void {
  const tags = ['database'];
  typed(app).get(
    '/api/db/discovery/bucket/:bucket/key/:key',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary: 'One stored entry; in METRICS and STATUS_HISTORY a bare series key gives its latest point',
        description:
          'Keys: STATUS and THRESHOLDS by metric key (`node_cpu`, `system_cpu`, `port_8080`). METRICS and ' +
          'STATUS_HISTORY hold one point per cycle under `<key>:<timeMs>` (e.g. `node_cpu:1700000000000`); the bare ' +
          'key (`node_cpu`) answers the latest point, with its `timeMs`. 404 for an unknown bucket or key.',
        security: sec,
        params: Type.Object({ bucket: BucketParam, key: Type.String({ maxLength: 512, example: 'system_cpu' }) }),
        response: { 200: DB_ENTRY, ...errs },
      },
    },
    async (req) => ({
      bucket: req.params.bucket,
      key: req.params.key,
      ...(await deps.db.get(req.params.bucket, req.params.key)),
    }),
  );

  typed(app).get(
    '/v1/db/discovery/bucket/:bucket/allJSON',
    {
      config: { auth: 'readonly' },
      schema: {
        tags,
        summary:
          'All entries of a bucket (at most 10,000) as JSON, {} for an empty one; 404 for a bucket that is not one of the four',
        security: sec,
        params: Type.Object({ bucket: BucketParam }),
        response: { 200: DB_ALL, ...errs },
      },
    },
    async (req) => deps.db.all(req.params.bucket),
  );

  app.get(
    '/v1/db/discovery/stats',
    {
      config: { auth: 'readonly' },
      schema: { tags, summary: 'Every bucket with its key count', security: sec, response: { 200: DB_STATS, ...errs } },
    },
    async () => deps.db.stats(),
  );

  app.post(
    '/backupDatabase',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Online consistent backup of the agent store into <DATA_DIR>/backups/',
        security: sec,
        response: { 200: BACKUP, ...errs },
      },
    },
    async () => ({ code: 200, message: 'backup written', ...(await deps.db.backup()) }),
  );

  app.post(
    '/reinitDatabase',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Delete all metrics, thresholds and status history (users, settings, certificates stay). Cannot be undone.',
        security: sec,
        response: { 200: REINIT, ...errs },
      },
    },
    async () => ({ code: 200, message: 'database reinitialised', ...(await deps.db.reinit()) }),
  );
}
