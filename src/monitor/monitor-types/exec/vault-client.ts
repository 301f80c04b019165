/**
 * HashiCorp Vault KV v2 reader: `GET {addr}/v1/{mount}/data/{path}` with `X-Vault-Token`, response
 * `{ data: { data: {...}, metadata: {...} } }` (https://developer.hashicorp.com/vault/api-docs/secret/kv/kv-v2#read-secret-version).
 * A reference `secret/app/db#password` reads mount `secret`, path `app/db`, key `password`. Whole secrets are cached
 * for `cacheTtlMs` (default 30 s) per address + token + path. Every failure is a TemplateError (→ outcome exception)
 * whose message never carries the token or a secret value.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { TemplateError } from './templates.js';

export interface VaultConfig {
  addr: string;
  token: string;
  /** PEM text of the CA that signed Vault's certificate (absent: the system's CAs). */
  caPem?: string;
  namespace?: string;
}

export interface VaultClientOptions {
  cacheTtlMs?: number;
  requestTimeoutMs?: number;
  now?: () => number;
}

export interface VaultClient {
  read(cfg: VaultConfig, path: string, key: string, signal?: AbortSignal): Promise<string>;
  /** Requests actually sent (cache misses), for tests. */
  readonly requests: number;
  clear(): void;
}

/** Builds the config from the service settings (vaultAddr, vaultCaCert, vaultNamespace) and secret vaultToken. */
export async function vaultConfigFrom(
  settings: { get(key: string): string | undefined },
  secrets: { get(name: string): Promise<string | undefined> },
): Promise<VaultConfig> {
  const addr = settings.get('vaultAddr');
  if (!addr) throw new TemplateError('setting vaultAddr is not set (needed for {{vault:...}} references)');
  const token = await secrets.get('vaultToken');
  if (!token) throw new TemplateError('secret vaultToken is not in the secret store');
  const ca = settings.get('vaultCaCert');
  let caPem: string | undefined;
  if (ca) {
    try {
      caPem = ca.includes('-----BEGIN') ? ca : readFileSync(ca, 'utf8');
    } catch {
      throw new TemplateError('setting vaultCaCert: cannot read the CA file');
    }
  }
  return { addr, token, caPem, namespace: settings.get('vaultNamespace') || undefined };
}

function get(
  url: URL,
  headers: Record<string, string>,
  caPem: string | undefined,
  timeoutMs: number,
  signal?: AbortSignal,
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method: 'GET', headers, ca: caPem, timeout: timeoutMs, signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 1_000_000) req.destroy(new Error('response too large'));
        else chunks.push(c);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

function vaultErrors(body: string): string {
  try {
    const j = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(j.errors) && j.errors.length > 0) return j.errors.map(String).join('; ').slice(0, 200);
  } catch {
    /* not JSON */
  }
  return '';
}

function buildUrl(addr: string, path: string): URL {
  let base: URL;
  try {
    base = new URL(addr);
  } catch {
    throw new TemplateError('setting vaultAddr is not a URL');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:')
    throw new TemplateError('setting vaultAddr must be http(s)');
  const [mount, ...rest] = path.split('/');
  const enc = (s: string) => encodeURIComponent(s);
  const prefix = base.pathname.replace(/\/+$/, '');
  return new URL(`${prefix}/v1/${enc(mount ?? '')}/data/${rest.map(enc).join('/')}`, base);
}

export function createVaultClient(opts: VaultClientOptions = {}): VaultClient {
  const ttlMs = opts.cacheTtlMs ?? 30_000;
  const timeoutMs = opts.requestTimeoutMs ?? 5_000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { atMs: number; data: Record<string, unknown> }>();
  let requests = 0;

  async function fetchSecret(cfg: VaultConfig, path: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const url = buildUrl(cfg.addr, path);
    const headers: Record<string, string> = { 'X-Vault-Token': cfg.token, Accept: 'application/json' };
    if (cfg.namespace) headers['X-Vault-Namespace'] = cfg.namespace;
    requests++;
    let res: { status: number; body: string };
    try {
      res = await get(url, headers, cfg.caPem, timeoutMs, signal);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new TemplateError(`vault ${path}: ${code ?? (e as Error).message}`);
    }
    if (res.status !== 200) {
      const why = vaultErrors(res.body);
      throw new TemplateError(`vault ${path}: HTTP ${res.status}${why ? ` (${why})` : ''}`);
    }
    let data: unknown;
    try {
      data = (JSON.parse(res.body) as { data?: { data?: unknown } }).data?.data;
    } catch {
      throw new TemplateError(`vault ${path}: response is not JSON`);
    }
    if (!data || typeof data !== 'object')
      throw new TemplateError(`vault ${path}: no data (deleted or not a KV v2 secret)`);
    return data as Record<string, unknown>;
  }

  return {
    get requests() {
      return requests;
    },
    clear() {
      cache.clear();
    },
    async read(cfg, path, key, signal) {
      const tokenId = createHash('sha256').update(cfg.token).digest('hex').slice(0, 16);
      const cacheKey = `${cfg.addr}|${cfg.namespace ?? ''}|${tokenId}|${path}`;
      let hit = cache.get(cacheKey);
      if (!hit || now() - hit.atMs >= ttlMs) {
        hit = { atMs: now(), data: await fetchSecret(cfg, path, signal) };
        cache.set(cacheKey, hit);
      }
      const v = hit.data[key];
      if (v === undefined || v === null) throw new TemplateError(`vault ${path}: no key "${key}"`);
      return typeof v === 'string' ? v : JSON.stringify(v);
    },
  };
}
