/**
 * The settings-level network fence (networkAllow / networkDeny: allowed and denied CIDRs, IPv4 and IPv6) — one policy
 * for every monitor type that opens a socket (docs/security.md §5). A non-empty allow list means only those ranges;
 * deny always wins. Unspecified addresses (0.0.0.0/8, ::) connect to this host, so they are judged as loopback (both
 * 127.0.0.1 and ::1); IPv4-mapped (::ffff:a.b.c.d, ::ffff:7f00:1) and NAT64 (64:ff9b::/96) addresses are judged as the
 * IPv4 address they carry. `resolveChecked` resolves a host name, checks every address and returns one that is
 * allowed, for the caller to connect to that very address (no second lookup, no DNS-rebinding gap). The default
 * denies the cloud metadata addresses and nothing else (monitors exist to reach internal targets).
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../../../core/errors.js';
import type { NetworkPolicy } from '../types.js';

/** Cloud metadata services: AWS/GCP/Azure/OpenStack (IPv4 and AWS's IPv6), AWS ECS task metadata, Alibaba. */
export const DEFAULT_DENY: readonly string[] = [
  '169.254.169.254/32',
  'fd00:ec2::254/128',
  '169.254.170.2/32',
  '100.100.100.200/32',
];

/** An Error with code EPOLICY: the network policy refused the address (the check's outcome is `exception`). */
export function policyError(reason: string): Error {
  return Object.assign(new Error(reason), { code: 'EPOLICY' });
}

export function isPolicyError(e: unknown): e is Error {
  return (e as { code?: unknown } | undefined)?.code === 'EPOLICY';
}

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

/** "::ffff:1.2.3.4" / "::ffff:7f00:1" / "64:ff9b::7f00:1" → "1.2.3.4" so IPv4 rules also fence IPv4-mapped and NAT64
 * IPv6 addresses; strips [brackets] and zone ids. */
export function normaliseAddress(address: string): string {
  let a = address.trim();
  if (a.startsWith('[') && a.endsWith(']')) a = a.slice(1, -1);
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  const dotted = /^(?:::ffff:|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(a);
  if (dotted) return dotted[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(a);
  if (hex) {
    const hi = parseInt(hex[1]!, 16);
    const lo = parseInt(hex[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return a;
}

const UNSPECIFIED_V4 = new BlockList();
UNSPECIFIED_V4.addSubnet('0.0.0.0', 8, 'ipv4');

/** The addresses whose rules decide for `address`: itself, or both loopbacks for an unspecified address. */
function judgedAs(address: string, family: 'ipv4' | 'ipv6'): [string, 'ipv4' | 'ipv6'][] {
  const unspecified = family === 'ipv4' ? UNSPECIFIED_V4.check(address, 'ipv4') : /^[0:]+$/.test(address);
  return unspecified
    ? [
        ['127.0.0.1', 'ipv4'],
        ['::1', 'ipv6'],
      ]
    : [[address, family]];
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
    const judged = judgedAs(address, version === 4 ? 'ipv4' : 'ipv6');
    const as = judged.length > 1 ? ' (an unspecified address reaches this host: judged as loopback)' : '';
    for (const [a, family] of judged) {
      const denied = matchRule(deny, a, family);
      if (denied) return `address ${address} is denied by the network policy (${denied.cidr})${as}`;
      if (allow.length > 0 && matchRule(allow, a, family) === undefined)
        return `address ${address} is not in the network policy's allowed ranges${as}`;
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

/**
 * Resolves `host` (an IP literal is taken as it is; [brackets] stripped), checks every address against the policy and
 * returns the first allowed one — connect to exactly that address. Throws EPOLICY when none is allowed, and the
 * resolver's own error (ENOTFOUND…) when the name does not resolve.
 */
export async function resolveChecked(
  policy: NetworkPolicy,
  host: string,
): Promise<{ address: string; family: 4 | 6; dnsMs: number }> {
  const h = host.trim().replace(/^\[|\]$/g, '');
  const literal = isIP(h);
  if (literal !== 0) {
    const reason = policy.denies(h);
    if (reason !== undefined) throw policyError(reason);
    return { address: h, family: literal as 4 | 6, dnsMs: 0 };
  }
  const t0 = performance.now();
  const list = await lookup(h, { all: true });
  const dnsMs = Math.round((performance.now() - t0) * 1000) / 1000;
  let firstReason: string | undefined;
  for (const a of list) {
    const reason = policy.denies(a.address);
    if (reason === undefined) return { address: a.address, family: a.family as 4 | 6, dnsMs };
    firstReason ??= reason;
  }
  throw policyError(`${h}: ${firstReason ?? 'no address'}`);
}
