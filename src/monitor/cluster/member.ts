/**
 * This instance as a cluster member: its identity (a unique id per process, PROBE, LOCATION, version, address) and,
 * with a PostgreSQL store, the coordinator that heartbeats and holds shard leases. With LMDB there is no
 * coordinator: the one process runs every monitor and its scheduler path is untouched.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServiceConfig } from '../../core/config/env.js';
import { ClusterStore } from './cluster-store.js';
import { ClusterCoordinator, type MemberIdentity } from './coordinator.js';
import { ResultRate } from './result-rate.js';

export interface ClusterTiming {
  /** Heartbeat period (default 5,000 ms). */
  heartbeatMs?: number;
  /** A member silent this long is gone, and a lease not renewed this long expires (default 15,000 ms). */
  ttlMs?: number;
}

export interface ClusterMember {
  identity: MemberIdentity;
  coordinator?: ClusterCoordinator;
  /** Results recorded per minute (single mode; the coordinator keeps its own). */
  rate: ResultRate;
  /** Counts a recorded result (the run path: O(1)). */
  noteResult(tsMs: number): void;
  /** Joins once the address is known (after listen). */
  start(address: string): Promise<void>;
  stop(): Promise<void>;
}

export async function createClusterMember(
  cfg: ServiceConfig,
  version: string,
  log: Logger,
  timing: ClusterTiming = {},
): Promise<ClusterMember> {
  const identity: MemberIdentity = {
    id: `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    probe: cfg.probe,
    location: cfg.location,
    version,
    address: '',
    startedMs: Date.now(),
  };
  const rate = new ResultRate();
  if (cfg.store.driver !== 'postgres') {
    return {
      identity,
      rate,
      noteResult: (tsMs) => rate.add(tsMs),
      start: async (address) => void (identity.address = address),
      stop: async () => undefined,
    };
  }
  const store = await ClusterStore.open(cfg.store.url, cfg.store.namespace);
  const coordinator = new ClusterCoordinator({ store, self: identity, log, ...timing });
  return {
    identity,
    coordinator,
    rate,
    noteResult: () => coordinator.noteResult(),
    async start(address) {
      identity.address = address;
      await coordinator.start();
      log.info({ member: identity.id, probe: identity.probe }, 'joined the cluster');
    },
    async stop() {
      await coordinator.stop();
      await store.close();
    },
  };
}
