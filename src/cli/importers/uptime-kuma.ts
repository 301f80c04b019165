/**
 * Uptime Kuma's backup file (Settings → Backup → Export, JSON: `{ version, notificationList, monitorList }`) mapped
 * to our monitors: http → url (api when it has a method, headers, body or basic auth), keyword → url with the keyword
 * as pattern, json-query → api, port → tcp, ping → ping, dns → nslookup, mysql/postgres/sqlserver → db. Kinds we do
 * not have (push until the push type exists, docker, mongodb, redis, mqtt, grpc, radius, steam, gamedig, group,
 * real-browser, kafka, tailscale) are reported with the reason. Passwords become ${IMPORT_…} references.
 */
import {
  basics,
  clamp,
  escapeRegex,
  headerList,
  nameMaker,
  schedule,
  secretRef,
  type Entry,
  type Imported,
} from './common.js';

interface KumaMonitor {
  name?: string;
  type?: string;
  url?: string;
  method?: string;
  hostname?: string;
  port?: number | string;
  interval?: number;
  timeout?: number;
  maxretries?: number;
  active?: boolean | number;
  keyword?: string;
  invertKeyword?: boolean | number;
  jsonPath?: string;
  expectedValue?: string;
  headers?: string | null;
  body?: string | null;
  basic_auth_user?: string | null;
  basic_auth_pass?: string | null;
  ignoreTls?: boolean | number;
  dns_resolve_type?: string;
  dns_resolve_server?: string;
  databaseConnectionString?: string;
  databaseQuery?: string | null;
  tags?: Array<{ name?: string }>;
}

const DB_KINDS: Record<string, string> = { mysql: 'mysql', postgres: 'postgres', sqlserver: 'mssql' };
const REASONS: Record<string, string> = {
  push: 'push (heartbeat) monitors are not a monitor type here yet',
  docker: 'no docker container monitor type',
  mongodb: 'no MongoDB monitor type (db covers mysql, postgres, mssql)',
  redis: 'no Redis monitor type',
  group: 'groups are tags here: the group itself is not a monitor',
};

function http(k: KumaMonitor, e: Entry, notes: string[]): void {
  const method = (k.method ?? 'GET').toUpperCase();
  const needsApi = method !== 'GET' || k.headers || k.body || k.basic_auth_user || k.type === 'json-query';
  if (k.ignoreTls) e.ignoreTlsErrors = 'true';
  if (!needsApi) {
    e.type = 'url';
    e.url = k.url ?? '';
  } else {
    e.type = 'api';
    e.api = k.url ?? '';
    e.typeApi = method;
    if (k.headers) {
      try {
        e.headers = headerList(JSON.parse(k.headers) as Record<string, unknown>, notes);
      } catch {
        notes.push('headers are not JSON: left out');
      }
    }
    if (k.body) e.body = k.body;
    if (k.basic_auth_user) e.basicAuthUser = k.basic_auth_user;
    if (k.basic_auth_pass) e.basicAuthPwd = secretRef(e.name, 'basicAuthPwd');
  }
  if (k.type === 'keyword' && k.keyword) {
    e.pattern = escapeRegex(k.keyword);
    if (k.invertKeyword)
      notes.push('inverted keyword ("must not contain") has no equivalent: the monitor checks that it is present');
  }
  if (k.type === 'json-query') {
    if (k.expectedValue) e.pattern = escapeRegex(k.expectedValue);
    notes.push(`JSON query ${k.jsonPath ?? ''} is not evaluated here: the body must contain the expected value`);
  }
}

function db(k: KumaMonitor, e: Entry, notes: string[]): void {
  e.type = 'db';
  e.dbType = DB_KINDS[k.type!]!;
  e.query = k.databaseQuery || 'SELECT 1';
  try {
    const u = new URL((k.databaseConnectionString ?? '').replace(/^jdbc:/, ''));
    if (u.hostname) e.dbIp = u.hostname;
    if (u.port) e.dbPort = u.port;
    if (u.username) e.dbUser = decodeURIComponent(u.username);
    if (u.password) e.dbPwd = secretRef(e.name, 'dbPwd');
    const dbName = u.pathname.replace(/^\//, '');
    if (dbName) e.dbDb = dbName;
  } catch {
    notes.push('the connection string is not a URL: set dbIp, dbPort, dbUser and dbDb by hand');
  }
}

export function fromUptimeKuma(text: string): Imported {
  const doc = JSON.parse(text) as { monitorList?: KumaMonitor[] };
  if (!Array.isArray(doc.monitorList)) throw new Error('not an Uptime Kuma backup: no monitorList');
  const name = nameMaker();
  const out: Imported = { monitors: [], skipped: [], notes: [] };
  for (const k of doc.monitorList) {
    const kind = k.type ?? 'http';
    const e: Entry = { name: name(k.name ?? kind), type: '' };
    const notes: string[] = [];
    if (kind === 'http' || kind === 'keyword' || kind === 'json-query') http(k, e, notes);
    else if (kind === 'port') Object.assign(e, { type: 'tcp', ip: k.hostname ?? '', port: String(k.port ?? '') });
    else if (kind === 'ping') Object.assign(e, { type: 'ping', ip: k.hostname ?? '' });
    else if (kind === 'dns') {
      Object.assign(e, { type: 'nslookup', domain: k.hostname ?? '', recordType: k.dns_resolve_type ?? 'A' });
      if (k.dns_resolve_server) e.dnsServer = k.dns_resolve_server.split(',')[0]!.trim();
    } else if (DB_KINDS[kind]) db(k, e, notes);
    else {
      out.skipped.push({
        name: k.name ?? e.name,
        reason: REASONS[kind] ?? `no monitor type for Uptime Kuma's "${kind}"`,
      });
      continue;
    }
    const s = schedule(k.interval ?? 60);
    Object.assign(e, s.fields);
    if (s.note) notes.push(s.note);
    if (k.timeout) e.timeout = String(clamp(k.timeout, 1, 300));
    if (k.maxretries) e.retries = String(clamp(k.maxretries, 0, 10));
    basics(e, k.name, !(k.active === false || k.active === 0));
    const tags = (k.tags ?? []).map((t) => t.name).filter((t): t is string => Boolean(t));
    if (tags.length) e.tags = tags;
    out.monitors.push(e);
    for (const note of notes) out.notes.push({ name: e.name, note });
  }
  return out;
}
