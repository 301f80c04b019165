/** GET /cluster (readonly): the cluster's members, the shards each holds, and unassigned monitors (docs/cluster.md). */
import type { FastifyInstance } from 'fastify';
import { ERROR_SCHEMA } from '../../core/http/error-handler.js';
import { CLUSTER_SCHEMA, clusterInfo, type ClusterViewDeps } from '../cluster/cluster-view.js';

export function registerClusterRoutes(app: FastifyInstance, deps: ClusterViewDeps): void {
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
}
