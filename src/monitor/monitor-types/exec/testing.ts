/** Helpers for the exec tests and bench: a CheckContext with an abort at the timeout, and PNG/webm/HAR probes. */
import { existsSync, readFileSync } from 'node:fs';
import pino from 'pino';
import type { CheckContext } from '../types.js';

export function makeContext(opts: {
  timeoutMs: number;
  artifactDir?: string;
  secrets?: Record<string, string>;
  settings?: Record<string, string>;
}): CheckContext & { dispose(): void } {
  const ac = new AbortController();
  const start = Date.now();
  const timer = setTimeout(() => ac.abort(new Error('timeout')), opts.timeoutMs);
  return {
    signal: ac.signal,
    deadlineMs: start + opts.timeoutMs,
    timeoutMs: opts.timeoutMs,
    now: () => Date.now(),
    log: pino({ level: 'silent' }),
    policy: { denies: () => undefined },
    artifactDir: opts.artifactDir,
    secrets: { get: async (n) => opts.secrets?.[n] },
    settings: { get: (k) => opts.settings?.[k] },
    dispose: () => clearTimeout(timer),
  };
}

/** Width and height from a PNG's signature + IHDR, or undefined when the file is not a PNG. */
export function pngSize(file: string): { width: number; height: number } | undefined {
  const b = readFileSync(file);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (b.length < 24 || !b.subarray(0, 8).equals(sig) || b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

export function isWebm(file: string): boolean {
  const b = readFileSync(file);
  return b.length > 100 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3 && b.includes('webm');
}

/** Skip reason when a browser is missing (never under CI=true: there a missing browser must fail). */
export function browserSkip(path: string): string | false {
  if (existsSync(path) || process.env.CI === 'true') return false;
  return `${path} is not installed`;
}
