/** sockets: every listening TCP/UDP socket with its owner pid, and established TCP connections per local port. */
import { createSocketTableScanner } from '../../../core/system/socket-tables.js';
import { listListeners, type Listener, type SocketOwnerResolver } from '../../../core/system/sockets.js';
import type { Collector } from './types.js';

export interface SocketFacts {
  listeners: Listener[];
  /** local port → established TCP connections. */
  established: Record<string, number>;
}

export function createSocketsCollector(
  resolver: SocketOwnerResolver,
  opts: { procRoot?: string } = {},
): Collector<SocketFacts> {
  const tables = createSocketTableScanner(opts);
  return {
    id: 'sockets',
    collect() {
      const t = tables.scan();
      return { listeners: listListeners(resolver, t.listeners), established: Object.fromEntries(t.established) };
    },
  };
}
