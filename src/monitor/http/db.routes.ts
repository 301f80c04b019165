/** GET /v1/db/exec/stats, GET /v1/db/exec/buckets, POST /backupDatabase (admin). See reporting/db-backup.ts. */
import type { FastifyInstance } from 'fastify';
import { typed } from '../../core/http/app.js';
import { Type } from '@sinclair/typebox';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import type { DbAdmin } from '../reporting/db-backup.js';

const sec = [{ bearer: [] }];
const errs = { 400: ERROR_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA };
const BUCKET = Type.Object({ name: Type.String(), keys: Type.Integer(), bytes: Type.Optional(Type.Integer()) });

export function registerDbRoutes(app: FastifyInstance, deps: { db: DbAdmin }): void {
  const tags = ['database'];
  app.get(
    '/v1/db/exec/stats',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Every bucket with its key count and size in bytes (where the store knows it)',
        security: sec,
        response: {
          200: Type.Object({
            driver: Type.String(),
            buckets: Type.Array(BUCKET),
            totalKeys: Type.Integer(),
            totalBytes: Type.Optional(Type.Integer()),
          }),
          ...errs,
        },
      },
    },
    async () => deps.db.stats(),
  );

  app.get(
    '/v1/db/exec/buckets',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'All bucket names',
        security: sec,
        response: { 200: Type.Object({ buckets: Type.Array(Type.String()) }), ...errs },
      },
    },
    async () => ({ buckets: await deps.db.bucketNames() }),
  );

  typed(app).post(
    '/backupDatabase',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Online consistent backup of the store (all buckets) into <DATA_DIR>/backups/, labelled with the dbname',
        security: sec,
        body: Type.Object(
          { database: Type.String({ description: 'a dbname: exec, url, api, tcp, ping, nslookup, snmp, db, sys' }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            code: Type.Integer(),
            message: Type.String(),
            database: Type.String(),
            file: Type.String(),
            path: Type.String(),
            bytes: Type.Integer(),
            driver: Type.String(),
            tookMs: Type.Integer(),
          }),
          ...errs,
        },
      },
    },
    async (req) => {
      const r = await deps.db.backup(req.body.database);
      return { code: 200, message: `backup written to ${r.file}`, ...r };
    },
  );
}
