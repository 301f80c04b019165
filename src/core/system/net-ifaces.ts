/** Network interface counters and rates from /proc/net/dev deltas. */
import { readProc, ratePerS, round2 } from './proc-read.js';

export interface IfaceCounters {
  iface: string;
  rxBytes: number;
  rxPackets: number;
  rxErrors: number;
  rxDrops: number;
  txBytes: number;
  txPackets: number;
  txErrors: number;
  txDrops: number;
}

export interface IfaceRates extends IfaceCounters {
  rxBytesPerS: number;
  txBytesPerS: number;
  rxPacketsPerS: number;
  txPacketsPerS: number;
}

export function parseNetDev(text: string): IfaceCounters[] {
  const out: IfaceCounters[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map((x) => Number(x) || 0);
    if (f.length < 16) continue;
    out.push({
      iface: line.slice(0, colon).trim(),
      rxBytes: f[0]!,
      rxPackets: f[1]!,
      rxErrors: f[2]!,
      rxDrops: f[3]!,
      txBytes: f[8]!,
      txPackets: f[9]!,
      txErrors: f[10]!,
      txDrops: f[11]!,
    });
  }
  return out;
}

export interface NetIfaceSampler {
  sample(): IfaceRates[];
}

export function createNetIfaceSampler(opts: { procRoot?: string; now?: () => number } = {}): NetIfaceSampler {
  const now = opts.now ?? Date.now;
  let prev = new Map<string, IfaceCounters>();
  let prevMs: number | undefined;
  return {
    sample(): IfaceRates[] {
      const cur = parseNetDev(readProc(`${opts.procRoot ?? '/proc'}/net/dev`) ?? '');
      const t = now();
      const dt = prevMs === undefined ? 0 : t - prevMs;
      const out = cur.map((c) => {
        const p = prev.get(c.iface);
        return {
          ...c,
          rxBytesPerS: round2(ratePerS(p?.rxBytes, c.rxBytes, dt)),
          txBytesPerS: round2(ratePerS(p?.txBytes, c.txBytes, dt)),
          rxPacketsPerS: round2(ratePerS(p?.rxPackets, c.rxPackets, dt)),
          txPacketsPerS: round2(ratePerS(p?.txPackets, c.txPackets, dt)),
        };
      });
      prev = new Map(cur.map((c) => [c.iface, c]));
      prevMs = t;
      return out;
    },
  };
}
