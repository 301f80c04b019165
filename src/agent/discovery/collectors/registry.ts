/**
 * The collectors of a discovery cycle: a plain map from id to collector. Adding one = a file in this folder and a line
 * here (the registry test proves every file is registered under its own id).
 */
import type { ProcessSampler } from '../../../core/system/processes.js';
import type { SocketOwnerResolver } from '../../../core/system/sockets.js';
import { createDisksCollector } from './disks.js';
import { createNetIfacesCollector } from './net-ifaces.js';
import { createProcessesCollector } from './processes.js';
import { createSocketsCollector } from './sockets.js';
import { createSystemCollector } from './system.js';

export interface CollectorDeps {
  processes: ProcessSampler;
  sockets: SocketOwnerResolver;
  procRoot?: string;
}

export function createCollectors(deps: CollectorDeps) {
  return {
    system: createSystemCollector({ procRoot: deps.procRoot }),
    disks: createDisksCollector({ procRoot: deps.procRoot }),
    netIfaces: createNetIfacesCollector({ procRoot: deps.procRoot }),
    processes: createProcessesCollector(deps.processes),
    sockets: createSocketsCollector(deps.sockets, { procRoot: deps.procRoot }),
  };
}

export type Collectors = ReturnType<typeof createCollectors>;
export type CollectorId = keyof Collectors;
/** What each collector produced; a collector that failed is absent. */
export type CollectorOutputs = { [K in CollectorId]?: Awaited<ReturnType<Collectors[K]['collect']>> };
