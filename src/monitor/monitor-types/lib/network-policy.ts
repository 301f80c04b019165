/**
 * Settings-level network fence for url/api targets: allowed and denied CIDRs (IPv4 and IPv6), checked on the address
 * actually connected. A non-empty allow list means only those ranges; deny always wins. The default denies the cloud
 * metadata address and nothing else (monitors exist to reach internal targets).
 */
import { BlockList, isIP } from 'node:net';
import { AppError } from '../../../core/errors.js';
import type { NetworkPolicy } from '../types.js';

export const DEFAULT_DENY: readonly string[] = ['169.254.169.254/32'];

interface Rule {
  cidr: string;
  list: BlockList;
}

/** Parses "a.b.c.d/n" or "v6::/n" (a bare address means a single host). Returns the normalised CIDR or undefined. */
function normaliseCidr(
  raw: string,
): { cidr: string; address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const text = raw.trim();
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefixText = slash === -1 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > max) return undefined;
  return { cidr: `${address}/${prefix}`, address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Splits a comma-separated list of CIDRs (settings keys networkAllow/networkDeny); throws 400 on a bad entry. */
export function parseCidrList(csv: string, field?: string): string[] {
  const out: string[] = [];
  for (const part of csv.split(',')) {
    if (part.trim() === '') continue;
    const parsed = normaliseCidr(part);
    if (parsed === undefined) throw AppError.badRequest(`invalid CIDR '${part.trim()}'`, field);
    out.push(parsed.cidr);
  }
  return out;
}

function toRules(cidrs: readonly string[], field: string): Rule[] {
  return cidrs.map((c) => {
    const parsed = normaliseCidr(c);
    if (parsed === undefined) throw AppError.badRequest(`invalid CIDR '${c}'`, field);
    const list = new BlockList();
    list.addSubnet(parsed.address, parsed.prefix, parsed.family);
    return { cidr: parsed.cidr, list };
  });
}

/** "::ffff:1.2.3.4" → "1.2.3.4" so IPv4 rules also fence IPv4-mapped IPv6 addresses; strips [brackets] and zone ids. */
export function normaliseAddress(address: string): string {
  let a = address.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(a);
  return mapped ? mapped[1]! : a;
}

/** Most addresses whose verdict a policy remembers. */
const MEMO_MAX = 10_000;

function matchRule(rules: Rule[], address: string, family: 'ipv4' | 'ipv6'): Rule | undefined {
  return rules.find((r) => r.list.check(address, family));
}

/**
 * Creates the policy. `deny` undefined → DEFAULT_DENY; an explicit empty list denies nothing. Throws 400 on a bad
 * CIDR (field 'networkAllow' / 'networkDeny').
 */
export function createNetworkPolicy(opts: { allow?: readonly string[]; deny?: readonly string[] } = {}): NetworkPolicy {
  const allow = toRules(opts.allow ?? [], 'networkAllow');
  const deny = toRules(opts.deny ?? DEFAULT_DENY, 'networkDeny');
  // Verdicts memoised per address (a policy object is rebuilt on every settings change, so the memo never goes
  // stale); bounded: cleared when full. '' = allowed.
  const memo = new Map<string, string>();
  const decide = (raw: string): string | undefined => {
    const address = normaliseAddress(raw);
    const version = isIP(address);
    if (version === 0) return `'${raw}' is not an IP address`;
    const family = version === 4 ? 'ipv4' : 'ipv6';
    const denied = matchRule(deny, address, family);
    if (denied) return `address ${address} is denied by the network policy (${denied.cidr})`;
    if (allow.length > 0 && matchRule(allow, address, family) === undefined) {
      return `address ${address} is not in the network policy's allowed ranges`;
    }
    return undefined;
  };
  return {
    denies(raw: string): string | undefined {
      let verdict = memo.get(raw);
      if (verdict === undefined) {
        if (memo.size >= MEMO_MAX) memo.clear();
        verdict = decide(raw) ?? '';
        memo.set(raw, verdict);
      }
      return verdict === '' ? undefined : verdict;
    },
  };
}
