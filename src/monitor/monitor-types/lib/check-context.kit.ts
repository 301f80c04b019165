/** A CheckContext for tests and benches: the signal aborts after timeoutMs, like the runner does. */
import pino from 'pino';
import type { CheckContext, NetworkPolicy } from '../types.js';
import { createNetworkPolicy } from './network-policy.js';

export function makeCheckContext(
  opts: { timeoutMs?: number; policy?: NetworkPolicy } = {},
): CheckContext & { dispose(): void } {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
  return {
    signal: ac.signal,
    deadlineMs: Date.now() + timeoutMs,
    timeoutMs,
    now: () => Date.now(),
    log: pino({ level: 'silent' }),
    policy: opts.policy ?? createNetworkPolicy(),
    secrets: { get: async () => undefined },
    settings: { get: () => undefined },
    dispose: () => clearTimeout(timer),
  };
}
