/**
 * DNS lookups for the nslookup type through node:dns `Resolver` (c-ares): it does its own non-blocking sockets and
 * never uses libuv's thread pool, with or without an explicit server. Without a server the Resolver starts with the
 * servers of /etc/resolv.conf, so the system resolver is used without dns.lookup (getaddrinfo, thread pool).
 * (Consequence: /etc/hosts entries are not seen, as with `nslookup` itself.)
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';

export const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SOA'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export function isRecordType(v: string): v is RecordType {
  return (RECORD_TYPES as readonly string[]).includes(v);
}

const HOST_RE = /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;

export interface DnsServer {
  host: string;
  port: number;
}

/** Parses `host`, `host:port`, `v6`, `[v6]` or `[v6]:port`. Throws Error with a reason when malformed. */
export function parseDnsServer(v: string): DnsServer {
  const s = v.trim();
  let host: string;
  let portStr: string | undefined;
  const br = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (br) {
    host = br[1]!;
    portStr = br[2];
  } else if (isIP(s) === 6) {
    host = s;
  } else {
    const i = s.lastIndexOf(':');
    host = i >= 0 ? s.slice(0, i) : s;
    portStr = i >= 0 ? s.slice(i + 1) : undefined;
  }
  if (br && isIP(host) !== 6) throw new Error('a bracketed dnsServer must hold an IPv6 address');
  if (isIP(host) === 0 && !HOST_RE.test(host)) throw new Error('dnsServer host is not an IP address or hostname');
  const port = portStr === undefined ? 53 : Number(portStr);
  if (portStr !== undefined && (!/^\d{1,5}$/.test(portStr) || port < 1 || port > 65535)) {
    throw new Error('dnsServer port must be 1-65535');
  }
  return { host, port };
}

/** The form Resolver.setServers takes. */
export function serverString(s: DnsServer): string {
  return isIP(s.host) === 6 ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
}

/** Turns a server hostname into an address with c-ares (system servers), not getaddrinfo. */
export async function resolveServerHost(host: string, timeoutMs: number): Promise<string> {
  if (isIP(host)) return host;
  if (host === 'localhost') return '127.0.0.1';
  const r = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  try {
    return (await r.resolve4(host))[0]!;
  } catch {
    return (await r.resolve6(host))[0]!;
  }
}

/** Answers of one lookup, each rendered as a string (see formatAnswers). */
export async function queryRecords(
  resolver: dns.Resolver,
  domain: string,
  type: RecordType,
): Promise<{ answers: string[]; raw: unknown }> {
  switch (type) {
    case 'A':
      return wrap(await resolver.resolve4(domain));
    case 'AAAA':
      return wrap(await resolver.resolve6(domain));
    case 'CNAME':
      return wrap(await resolver.resolveCname(domain));
    case 'NS':
      return wrap(await resolver.resolveNs(domain));
    case 'MX': {
      const mx = await resolver.resolveMx(domain);
      mx.sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
      return { answers: mx.map((m) => `${m.priority} ${m.exchange}`), raw: mx };
    }
    case 'TXT': {
      const txt = await resolver.resolveTxt(domain);
      return { answers: txt.map((chunks) => chunks.join('')), raw: txt };
    }
    case 'SOA': {
      const s = await resolver.resolveSoa(domain);
      return {
        answers: [`${s.nsname} ${s.hostmaster} ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minttl}`],
        raw: s,
      };
    }
  }
}

function wrap(a: string[]): { answers: string[]; raw: unknown } {
  return { answers: a, raw: a };
}

function normHost(h: string): string {
  return h.trim().toLowerCase().replace(/\.$/, '');
}

function normAddr(a: string): string {
  const s = a.trim().toLowerCase();
  if (isIP(s) !== 6) return s;
  try {
    return new URL(`http://[${s}]/`).hostname.slice(1, -1);
  } catch {
    return s;
  }
}

/** True when `expected` equals one answer in one of the documented forms (docs/checks-protocols.md):
 * A/AAAA the address (IPv6 compared canonically); CNAME/NS the host name (case and trailing dot ignored);
 * MX "priority host" or the host alone; TXT the record's chunks joined with nothing between them;
 * SOA the whole "nsname hostmaster serial refresh retry expire minttl" or the primary name server alone. */
export function answerMatches(type: RecordType, answers: string[], expected: string): boolean {
  const want = expected.trim();
  return answers.some((a) => {
    switch (type) {
      case 'A':
      case 'AAAA':
        return normAddr(a) === normAddr(want);
      case 'CNAME':
      case 'NS':
        return normHost(a) === normHost(want);
      case 'MX': {
        const [prio, host] = a.split(' ');
        const parts = want.split(/\s+/);
        if (parts.length === 1) return normHost(parts[0]!) === normHost(host!);
        return parts.length === 2 && parts[0] === prio && normHost(parts[1]!) === normHost(host!);
      }
      case 'TXT':
        return a === expected || a.trim() === want;
      case 'SOA': {
        const parts = want.split(/\s+/);
        const have = a.split(' ');
        if (parts.length === 1) return normHost(parts[0]!) === normHost(have[0]!);
        return (
          parts.length === 7 && parts.every((p, i) => (i < 2 ? normHost(p) === normHost(have[i]!) : p === have[i]))
        );
      }
    }
  });
}

/** c-ares error code → DNS rcode name (for ERROR messages) or undefined when the resolver itself failed. */
export function rcodeOf(code: string | undefined): string | undefined {
  switch (code) {
    case 'ENOTFOUND':
      return 'NXDOMAIN';
    case 'ENODATA':
      return 'NOERROR (no answer)';
    case 'ESERVFAIL':
      return 'SERVFAIL';
    case 'EREFUSED':
      return 'REFUSED';
    case 'ENOTIMP':
      return 'NOTIMP';
    case 'EFORMERR':
      return 'FORMERR';
    default:
      return undefined;
  }
}
