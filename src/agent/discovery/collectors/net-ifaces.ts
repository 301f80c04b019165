/** netIfaces: rx/tx bytes/s and packets/s, errors and drops per network interface. */
import { createNetIfaceSampler, type IfaceRates } from '../../../core/system/net-ifaces.js';
import type { Collector } from './types.js';

export function createNetIfacesCollector(opts: { procRoot?: string } = {}): Collector<IfaceRates[]> {
  const s = createNetIfaceSampler({ procRoot: opts.procRoot });
  return { id: 'netIfaces', collect: () => s.sample() };
}
