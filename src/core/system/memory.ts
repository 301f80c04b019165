/** Memory and swap from /proc/meminfo. "Used" memory = MemTotal − MemAvailable (what the kernel could not free). */
import { readProc, round2 } from './proc-read.js';

export interface MemoryInfo {
  totalBytes: number;
  availableBytes: number;
  usedBytes: number;
  freeBytes: number;
  usedPct: number;
  swapTotalBytes: number;
  swapFreeBytes: number;
  swapUsedBytes: number;
  /** 0 when there is no swap. */
  swapUsedPct: number;
}

export function parseMeminfo(text: string): MemoryInfo {
  const kb = new Map<string, number>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    kb.set(line.slice(0, colon), Number.parseInt(line.slice(colon + 1), 10) || 0);
  }
  const b = (k: string): number => (kb.get(k) ?? 0) * 1024;
  const totalBytes = b('MemTotal');
  const freeBytes = b('MemFree');
  // Kernels before 3.14 have no MemAvailable: approximate it.
  const availableBytes = kb.has('MemAvailable') ? b('MemAvailable') : freeBytes + b('Buffers') + b('Cached');
  const usedBytes = Math.max(0, totalBytes - availableBytes);
  const swapTotalBytes = b('SwapTotal');
  const swapFreeBytes = b('SwapFree');
  const swapUsedBytes = Math.max(0, swapTotalBytes - swapFreeBytes);
  return {
    totalBytes,
    availableBytes,
    usedBytes,
    freeBytes,
    usedPct: totalBytes > 0 ? round2((usedBytes * 100) / totalBytes) : 0,
    swapTotalBytes,
    swapFreeBytes,
    swapUsedBytes,
    swapUsedPct: swapTotalBytes > 0 ? round2((swapUsedBytes * 100) / swapTotalBytes) : 0,
  };
}

export function readMemory(procRoot = '/proc'): MemoryInfo {
  const text = readProc(`${procRoot}/meminfo`);
  if (text === undefined) throw new Error(`cannot read ${procRoot}/meminfo`);
  return parseMeminfo(text);
}
