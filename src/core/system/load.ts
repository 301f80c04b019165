/** Load averages from /proc/loadavg. */
import { readProc } from './proc-read.js';

export interface LoadAvg {
  load1: number;
  load5: number;
  load15: number;
  runnable: number;
  /** Scheduling entities (threads) on the system. */
  entities: number;
}

export function parseLoadavg(text: string): LoadAvg {
  const [l1, l5, l15, rq] = text.trim().split(/\s+/);
  const [run, all] = (rq ?? '0/0').split('/');
  return {
    load1: Number(l1) || 0,
    load5: Number(l5) || 0,
    load15: Number(l15) || 0,
    runnable: Number(run) || 0,
    entities: Number(all) || 0,
  };
}

export function readLoad(procRoot = '/proc'): LoadAvg {
  const text = readProc(`${procRoot}/loadavg`);
  if (text === undefined) throw new Error(`cannot read ${procRoot}/loadavg`);
  return parseLoadavg(text);
}
