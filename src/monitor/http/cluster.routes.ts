/**
 * GET /cluster (readonly): the cluster's members, the shards each holds, and unassigned monitors (docs/cluster.md).
 * GET /cluster/series/{dbname}/{name} (members only, auth 'cluster'): the rows a member holds of a monitor's history
 * in the hours not compacted yet, for another member's read (cluster/series-fetch.ts).
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { typed } from '../../core/http/app.js';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { CLUSTER_SCHEMA, clusterInfo, type ClusterViewDeps } from '../cluster/cluster-view.js';
import type { SeriesRowsAnswer } from '../cluster/series-fetch.js';
import { DBNAMES, type DbName } from '../monitor-types/types.js';

export interface ClusterRoutesDeps extends ClusterViewDeps {
  /** The rows this instance holds of a series (409 when it does not hold it). */
  seriesRows: (db: DbName, name: string) => Promise<SeriesRowsAnswer>;
}

const SERIES_SCHEMA = Type.Object(
  {
    rows: Type.String({
      description: 'the rows, base64 of one history WAL record (src/monitor/history/history-wal.ts)',
    }),
    count: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

export function registerClusterRoutes(app: FastifyInstance, deps: ClusterRoutesDeps): void {
  app.get(
    '/cluster',
    {
      config: { auth: 'readonly' },
      schema: {
        tags: ['utilities'],
        summary:
          'Cluster members (probe, location, version, address, last heartbeat, results per minute), the shards each ' +
          'holds, and monitors no live instance may run (single-process mode: this instance holds everything)',
        security: [{ bearer: [] }],
        response: { 200: CLUSTER_SCHEMA, 401: ERROR_SCHEMA },
      },
    },
    async () => clusterInfo(deps),
  );
  typed(app).get(
    '/cluster/series/:dbname/:name',
    {
      config: { auth: 'cluster' },
      schema: {
        tags: ['utilities'],
        summary:
          'Members only: the rows this instance holds of a monitor’s history in the open and the previous hour, for ' +
          'another member’s read. Needs a request signed by a member (X-Sentinel-Peer-Proof, keyed from the shared ' +
          'JWT key); a user’s token is refused whatever its group (403). 409 when this instance does not hold it.',
        security: [{ peerProof: [] }],
        params: Type.Object({
          dbname: Type.Union(DBNAMES.map((d) => Type.Literal(d))),
          name: Type.String({ minLength: 1, maxLength: 128 }),
        }),
        response: { 200: SERIES_SCHEMA, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 409: ERROR_SCHEMA },
      },
    },
    async (req) => deps.seriesRows(req.params.dbname, req.params.name),
  );
}
