/** sockets: every listening TCP/UDP socket with its owner pid, and established TCP connections per local port. */
import { countEstablished, listListeners, readListenerSockets, type Listener, type SocketOwnerResolver } from '../../../core/system/sockets.js';
import type { Collector } from './types.js';

export interface SocketFacts {
  listeners: Listener[];
  /** local port → established TCP connections. */
  established: Record<string, number>;
}

export function createSocketsCollector(resolver: SocketOwnerResolver, opts: { procRoot?: string } = {}): Collector<SocketFacts> {
  return {
    id: 'sockets',
    collect() {
      const listeners = listListeners(resolver, readListenerSockets(undefined, opts.procRoot));
      return { listeners, established: Object.fromEntries(countEstablished(opts.procRoot)) };
    },
  };
}
