/**
 * Gatus's config.yaml (`endpoints:`) mapped to our monitors by the URL's scheme: http(s) → url (api with a method
 * other than GET, headers or a body), tcp:// → tcp, icmp:// → ping, a `dns:` block → nslookup (the URL is the DNS
 * server). Conditions: `[STATUS] == 200` is what url checks anyway, `[BODY] == x` becomes a pattern,
 * `[RESPONSE_TIME] < N` becomes threshCri N; the others are noted. Alerts and external endpoints are reported.
 */
import { parse } from 'yaml';
import { basics, clamp, escapeRegex, headerList, nameMaker, schedule, type Entry, type Imported } from './common.js';

interface GatusEndpoint {
  name?: string;
  group?: string;
  url?: string;
  method?: string;
  interval?: string;
  enabled?: boolean;
  headers?: Record<string, string>;
  body?: string;
  conditions?: string[];
  dns?: { 'query-name'?: string; 'query-type'?: string };
  client?: { insecure?: boolean; timeout?: string };
  alerts?: unknown[];
}

/** A Go duration (1h30m, 90s, 5m) in seconds. */
export function goDuration(v: string | undefined, fallback: number): number {
  if (!v) return fallback;
  let s = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g))
    s += Number(m[1]) * { ms: 0.001, h: 3600, m: 60, s: 1 }[m[2]!]!;
  return s > 0 ? s : fallback;
}

function conditions(g: GatusEndpoint, e: Entry, notes: string[]): void {
  for (const c of g.conditions ?? []) {
    const rt = /^\[RESPONSE_TIME\]\s*<\s*(\d+)$/.exec(c.trim());
    const body = /^\[BODY\]\s*==\s*(.+)$/.exec(c.trim());
    if (rt) e.threshCri = rt[1];
    else if (/^\[STATUS\]\s*==\s*200$/.test(c.trim()) || /^\[CONNECTED\]\s*==\s*true$/.test(c.trim())) continue;
    else if (body && !body[1]!.includes('(')) e.pattern = escapeRegex(body[1]!.trim());
    else notes.push(`condition "${c}" has no equivalent here`);
  }
}

function target(g: GatusEndpoint, e: Entry, notes: string[]): string | undefined {
  const url = g.url ?? '';
  if (g.dns) {
    Object.assign(e, { type: 'nslookup', domain: g.dns['query-name'] ?? '', recordType: g.dns['query-type'] ?? 'A' });
    if (url) e.dnsServer = url.replace(/^[a-z]+:\/\//, '').replace(/:53$/, '');
    return;
  }
  const scheme = /^([a-z]+):\/\//.exec(url)?.[1];
  if (scheme === 'http' || scheme === 'https') {
    const method = (g.method ?? 'GET').toUpperCase();
    if (method === 'GET' && !g.headers && !g.body) Object.assign(e, { type: 'url', url });
    else {
      Object.assign(e, { type: 'api', api: url, typeApi: method });
      if (g.headers) e.headers = headerList(g.headers, notes);
      if (g.body) e.body = g.body;
    }
    if (g.client?.insecure) e.ignoreTlsErrors = 'true';
    return;
  }
  if (scheme === 'tcp' || scheme === 'tls' || scheme === 'starttls') {
    const u = new URL(url.replace(/^[a-z]+:/, 'http:'));
    Object.assign(e, { type: 'tcp', ip: u.hostname, port: u.port });
    if (scheme !== 'tcp') notes.push(`${scheme}:// is checked as a plain TCP connect (no TLS handshake)`);
    return;
  }
  if (scheme === 'icmp') {
    Object.assign(e, { type: 'ping', ip: url.replace(/^icmp:\/\//, '') });
    return;
  }
  return `no monitor type for Gatus's ${scheme ?? 'url'}:// endpoints`;
}

export function fromGatus(text: string): Imported {
  const doc = parse(text) as { endpoints?: GatusEndpoint[]; 'external-endpoints'?: Array<{ name?: string }> };
  if (!doc || !Array.isArray(doc.endpoints)) throw new Error('not a Gatus configuration: no endpoints');
  const name = nameMaker();
  const out: Imported = { monitors: [], skipped: [], notes: [] };
  for (const g of doc.endpoints) {
    const full = g.group ? `${g.group}/${g.name ?? ''}` : (g.name ?? 'endpoint');
    const e: Entry = { name: name(g.name ?? 'endpoint'), type: '' };
    const notes: string[] = [];
    const unmapped = target(g, e, notes);
    if (unmapped) {
      out.skipped.push({ name: full, reason: unmapped });
      continue;
    }
    conditions(g, e, notes);
    const s = schedule(goDuration(g.interval, 60));
    Object.assign(e, s.fields);
    if (s.note) notes.push(s.note);
    if (g.client?.timeout) e.timeout = String(clamp(goDuration(g.client.timeout, 10), 1, 300));
    basics(e, g.name, g.enabled !== false);
    if (g.group) e.tags = [g.group];
    if (g.alerts?.length) notes.push('alerts are configured per channel here (docs/alerting.md): set notifyChannels');
    out.monitors.push(e);
    for (const note of notes) out.notes.push({ name: e.name, note });
  }
  for (const x of doc['external-endpoints'] ?? [])
    out.skipped.push({
      name: x.name ?? 'external-endpoint',
      reason: 'push (heartbeat) monitors are not a monitor type here yet',
    });
  return out;
}
