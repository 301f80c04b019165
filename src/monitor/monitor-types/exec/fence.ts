/**
 * The settings-level network fence (networkAllow / networkDeny) applied to every request a browser transaction makes:
 * the request's host is resolved (IP literals as they are) and each address checked against the policy before the
 * browser may send it; a denied request is aborted and the run reports the reason. Lookups are cached for the run.
 * Known gap, documented: the browser resolves the name again itself, so a DNS answer that changes between the two
 * lookups is not caught (url/api checks fence the connected address instead).
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { NetworkPolicy } from '../types.js';

export type Fence = (url: string) => Promise<string | undefined>;

export function createFence(policy: NetworkPolicy): { fence: Fence; blocked(): string | undefined } {
  const cache = new Map<string, Promise<string | undefined>>();
  let first: string | undefined;
  const judge = async (host: string): Promise<string | undefined> => {
    const addrs = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
    for (const a of addrs) {
      const reason = policy.denies(a);
      if (reason) return `${host} (${a}): ${reason}`;
    }
    return undefined;
  };
  const fence: Fence = async (url) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:' && u.protocol !== 'ws:' && u.protocol !== 'wss:')
      return undefined;
    const host = u.hostname.replace(/^\[|\]$/g, '');
    let p = cache.get(host);
    if (!p) {
      p = judge(host).catch(() => undefined); // a name that doesn't resolve fails in the browser as it would anyway
      cache.set(host, p);
    }
    const reason = await p;
    if (reason) first ??= reason;
    return reason;
  };
  return { fence, blocked: () => first };
}
