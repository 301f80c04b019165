/**
 * The discovery agents the monitor service knows (bucket `agents`, format 1, docs/storage.md): per agent its URL (an
 * https origin), the host names/addresses it runs on (how a monitor's target is matched to it), the component token it
 * presents (sealed at rest, write-only) and the CA its certificate must chain to (write-only; default: the service's
 * own CA). Only admins register agents: the monitor calls a registered URL with a credential, so letting anyone else
 * choose the URL would be a server-side request forgery with credentials (docs/security.md). The token is bound to
 * the URL like every stored secret (§2): changing the URL without supplying the token again is a 400.
 */
import net from 'node:net';
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import { AppError } from '../../core/errors.js';
import { validateCaCert } from '../monitor-types/lib/ca-cert.js';

export const AGENTS_BUCKET = 'agents';
const NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const HOST_RE = /^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/;
const TOKEN_RE = /^[A-Za-z0-9._~+/=-]{1,8192}$/;
export const MAX_AGENT_HOSTS = 50;

/** Stored record (format 1). */
interface AgentRecord {
  v: 1;
  name: string;
  url: string;
  hosts: string[];
  tokenSealed: string;
  /** PEM; absent = trust the service's own CA. */
  caCert?: string;
  updatedMs: number;
  updatedBy?: string;
}

/** What the API shows: never the token or the CA. */
export interface AgentView {
  name: string;
  url: string;
  hosts: string[];
  tokenSet: boolean;
  caCertSet: boolean;
  updatedMs: number;
  updatedBy?: string;
}

/** What the enricher needs to call an agent (token decrypted on demand). */
export interface AgentTarget {
  name: string;
  url: string;
  caCert?: string;
  token(): string;
}

export interface AgentInput {
  url?: string;
  hosts?: string[];
  token?: string;
  caCert?: string;
}

/** A host as matched: lower case, without brackets and a trailing dot. */
export function normaliseHost(h: string): string {
  return h
    .trim()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

function parseUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw AppError.badRequest('url must be an absolute https URL, e.g. https://db-1:8070', 'body.url');
  }
  if (u.protocol !== 'https:') throw AppError.badRequest('url must use https (agents speak mutual TLS)', 'body.url');
  if (u.username || u.password) throw AppError.badRequest('url must not carry credentials', 'body.url');
  if ((u.pathname !== '/' && u.pathname !== '') || u.search || u.hash)
    throw AppError.badRequest('url is the agent origin only: https://host[:port], no path or query', 'body.url');
  return u.origin;
}

function parseHosts(raw: string[]): string[] {
  if (raw.length === 0 || raw.length > MAX_AGENT_HOSTS)
    throw AppError.badRequest(`hosts must list 1–${MAX_AGENT_HOSTS} host names or addresses`, 'body.hosts');
  const out = new Set<string>();
  for (const h of raw) {
    const n = normaliseHost(h);
    if (n.length === 0 || n.length > 253 || (net.isIP(n) === 0 && !HOST_RE.test(n)))
      throw AppError.badRequest(`hosts: ${JSON.stringify(h.slice(0, 80))} is not a host name or address`, 'body.hosts');
    out.add(n);
  }
  return [...out];
}

export class AgentRegistry {
  private readonly bucket: Bucket;
  private readonly byName = new Map<string, AgentRecord>();
  private readonly byHost = new Map<string, string>();

  constructor(
    store: KvStore,
    private readonly box: SecretBox,
    private readonly now: () => number = Date.now,
  ) {
    this.bucket = store.bucket(AGENTS_BUCKET);
    // Agents another instance registers or removes (a cluster on PostgreSQL: docs/cluster.md): they are few, reload all.
    store.watch(AGENTS_BUCKET, () => this.load());
  }

  /** Reads every agent; the maps are replaced whole, never empty meanwhile. */
  async load(): Promise<void> {
    const records: AgentRecord[] = [];
    for await (const e of this.bucket.range<AgentRecord>()) records.push(e.value);
    this.byName.clear();
    this.byHost.clear();
    for (const r of records) this.index(r);
  }

  get size(): number {
    return this.byName.size;
  }

  list(): AgentView[] {
    return [...this.byName.values()].sort((a, b) => a.name.localeCompare(b.name)).map(view);
  }

  get(name: string): AgentView {
    const r = this.byName.get(name);
    if (!r) throw AppError.notFound(`agent ${name} not found`);
    return view(r);
  }

  /** The agent registered for `host` (a name or address as a monitor targets it), or by explicit name. */
  target(hostOrName: { host?: string; agent?: string }): AgentTarget | undefined {
    const name = hostOrName.agent?.trim() || this.byHost.get(normaliseHost(hostOrName.host ?? ''));
    const r = name === undefined ? undefined : this.byName.get(name);
    if (!r) return undefined;
    return {
      name: r.name,
      url: r.url,
      caCert: r.caCert,
      token: () => this.box.decrypt(r.tokenSealed),
    };
  }

  /** Creates (url, hosts and token required) or updates an agent; returns the view and whether it was created. */
  async put(name: string, input: AgentInput, by?: string): Promise<{ view: AgentView; created: boolean }> {
    if (!NAME_RE.test(name)) throw AppError.badRequest('agent names are 1-64 of A-Z a-z 0-9 _ . -', 'params.name');
    const old = this.byName.get(name);
    const url = input.url !== undefined ? parseUrl(input.url) : old?.url;
    if (url === undefined) throw AppError.badRequest('url is required for a new agent', 'body.url');
    const hosts = input.hosts !== undefined ? parseHosts(input.hosts) : old?.hosts;
    if (hosts === undefined) throw AppError.badRequest('hosts is required for a new agent', 'body.hosts');
    if (input.token !== undefined && !TOKEN_RE.test(input.token))
      throw AppError.badRequest('token must be the agent component token (a JWT)', 'body.token');
    if (input.token === undefined && (old === undefined || old.url !== url))
      throw AppError.badRequest(
        old
          ? `changing url from ${old.url} to ${url}: supply token again (a stored token stays bound to its agent)`
          : 'token is required for a new agent',
        'body.token',
      );
    if (input.caCert !== undefined && input.caCert !== '') validateCaCert(input.caCert, 'body.caCert');
    for (const h of hosts) {
      const owner = this.byHost.get(h);
      if (owner !== undefined && owner !== name) throw AppError.conflict(`host ${h} is already agent ${owner}'s`);
    }
    const caCert = input.caCert === undefined ? old?.caCert : input.caCert || undefined;
    const rec: AgentRecord = {
      v: 1,
      name,
      url,
      hosts,
      tokenSealed: input.token !== undefined ? this.box.encrypt(input.token) : old!.tokenSealed,
      ...(caCert ? { caCert } : {}),
      updatedMs: this.now(),
      ...(by ? { updatedBy: by } : {}),
    };
    await this.bucket.put(name, rec);
    if (old) this.unindex(old);
    this.index(rec);
    return { view: view(rec), created: old === undefined };
  }

  async remove(name: string): Promise<void> {
    const r = this.byName.get(name);
    if (!r) throw AppError.notFound(`agent ${name} not found`);
    await this.bucket.delete(name);
    this.unindex(r);
  }

  private index(r: AgentRecord): void {
    this.byName.set(r.name, r);
    for (const h of r.hosts) this.byHost.set(h, r.name);
  }

  private unindex(r: AgentRecord): void {
    this.byName.delete(r.name);
    for (const h of r.hosts) if (this.byHost.get(h) === r.name) this.byHost.delete(h);
  }
}

function view(r: AgentRecord): AgentView {
  return {
    name: r.name,
    url: r.url,
    hosts: [...r.hosts],
    tokenSet: r.tokenSealed !== '',
    caCertSet: r.caCert !== undefined,
    updatedMs: r.updatedMs,
    ...(r.updatedBy ? { updatedBy: r.updatedBy } : {}),
  };
}
