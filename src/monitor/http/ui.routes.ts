/**
 * The web dashboard (web/): static files served by the monitor service itself, behind the same mutual TLS.
 *
 * - GET /            index.html, `Cache-Control: no-cache` + ETag (a reload always revalidates, 304 when unchanged).
 * - GET /ui/<v>/<f>  every other asset under a content-hash prefix `<v>` (hash of the whole web/ tree), so an asset
 *                    URL never changes meaning: `Cache-Control: public, max-age=31536000, immutable` + ETag. A stale
 *                    `<v>` (older page) is still served, with `no-cache`. Relative ES-module imports stay under `<v>`.
 * (Exec artifacts, linked from the monitor page, are served by artifacts.routes.ts at GET /artifacts/<name>/<ts>/<file>.)
 *
 * Files are read once at registration into memory (each compressed with brotli or gzip at the first request that
 * accepts it, then kept: ≈ 0.1 s of start saved); a request can only name a file of that map, so nothing outside web/ is reachable (paths with `..`, `\`, NUL or absolute parts → 404).
 * The static routes are `auth: 'none'` (mTLS fences them; the API calls made by the page carry the bearer token).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../core/errors.js';

export interface UiRouteDeps {
  /** Folder of the static files (default: <repo>/web). */
  webRoot?: string;
}

interface Asset {
  body: Buffer;
  /** The body compressed (made at the first use), or the body itself when it is not worth compressing. */
  br(): Buffer;
  gzip(): Buffer;
  etag: string;
  type: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = /^(text\/|application\/json|image\/svg)/;
const CSP =
  "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; style-src 'self'; script-src 'self'; " +
  "worker-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

export const DEFAULT_WEB_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../web');

/** Relative file name safe to look up: no empty, dot-dot, absolute, backslash or NUL parts. */
export function safeRelative(p: string): string | undefined {
  if (!p || p.includes('\0') || p.includes('\\') || p.startsWith('/')) return undefined;
  const parts = p.split('/');
  if (parts.some((s) => s === '' || s === '.' || s === '..')) return undefined;
  return parts.join('/');
}

/** Files of web/ that are development tooling, not assets (the type check `npm run check` runs: its config, its types). */
const NOT_ASSETS = new Set(['tsconfig.json', 'types.d.ts']);

function walk(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(root, r));
    else if (e.isFile() && !e.name.startsWith('.') && !NOT_ASSETS.has(r)) out.push(r);
  }
  return out.sort();
}

function once(make: () => Buffer): () => Buffer {
  let out: Buffer | undefined;
  return () => (out ??= make());
}

function asset(body: Buffer, type: string): Asset {
  const compress = COMPRESSIBLE.test(type) && body.length > 512;
  return {
    body,
    type,
    br: compress
      ? once(() => zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } }))
      : () => body,
    gzip: compress ? once(() => zlib.gzipSync(body, { level: 9 })) : () => body,
    etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}

/** Loads web/ into memory; index.html gets the asset prefix `/ui/<version>/` substituted for `{{BASE}}`. */
export function loadAssets(webRoot: string): { version: string; index: Asset; files: Map<string, Asset> } {
  const raw = new Map<string, Buffer>();
  for (const rel of walk(webRoot)) raw.set(rel, fs.readFileSync(path.join(webRoot, rel)));
  const h = crypto.createHash('sha256');
  for (const [rel, body] of raw) h.update(rel).update('\0').update(body);
  const version = h.digest('base64url').slice(0, 12);
  const files = new Map<string, Asset>();
  for (const [rel, body] of raw) {
    if (rel === 'index.html') continue;
    files.set(rel, asset(body, TYPES[path.extname(rel).toLowerCase()] ?? 'application/octet-stream'));
  }
  const html = (raw.get('index.html') ?? Buffer.from('<!doctype html><title>dashboard missing</title>')).toString(
    'utf8',
  );
  return { version, index: asset(Buffer.from(html.replaceAll('{{BASE}}', `/ui/${version}/`)), TYPES['.html']!), files };
}

function send(req: FastifyRequest, reply: FastifyReply, a: Asset, cache: string): FastifyReply {
  reply
    .header('cache-control', cache)
    .header('etag', a.etag)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
  if (a.type.startsWith('text/html')) reply.header('content-security-policy', CSP).header('x-frame-options', 'DENY');
  if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
  reply.type(a.type);
  const enc = String(req.headers['accept-encoding'] ?? '');
  if (/\bbr\b/.test(enc) && a.br() !== a.body) return reply.header('content-encoding', 'br').send(a.br());
  if (/\bgzip\b/.test(enc) && a.gzip() !== a.body) return reply.header('content-encoding', 'gzip').send(a.gzip());
  return reply.send(a.body);
}

export function registerUiRoutes(app: FastifyInstance, deps: UiRouteDeps = {}): { version: string } {
  const { version, index, files } = loadAssets(deps.webRoot ?? DEFAULT_WEB_ROOT);
  const hide = { hide: true };
  for (const p of ['/', '/index.html']) {
    app.get(p, { schema: hide, config: { auth: 'none' } }, async (req, reply) => send(req, reply, index, 'no-cache'));
  }
  app.get<{ Params: { v: string; '*': string } }>(
    '/ui/:v/*',
    { schema: hide, config: { auth: 'none' } },
    async (req, reply) => {
      const rel = safeRelative(req.params['*']);
      const a = rel === undefined ? undefined : files.get(rel);
      if (!a) throw AppError.notFound('no such file');
      return send(req, reply, a, req.params.v === version ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  );
  return { version };
}
