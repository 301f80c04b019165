/** System uptime from /proc/uptime. */
import { readProc } from './proc-read.js';

export interface Uptime {
  uptimeMs: number;
  /** Unix ms of the boot, derived from now − uptime. */
  bootTimeMs: number;
}

export function parseUptime(text: string, nowMs: number): Uptime {
  const uptimeMs = Math.round((Number(text.trim().split(/\s+/)[0]) || 0) * 1000);
  return { uptimeMs, bootTimeMs: nowMs - uptimeMs };
}

export function readUptime(procRoot = '/proc', nowMs = Date.now()): Uptime {
  const text = readProc(`${procRoot}/uptime`);
  if (text === undefined) throw new Error(`cannot read ${procRoot}/uptime`);
  return parseUptime(text, nowMs);
}
