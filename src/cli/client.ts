/**
 * The CLI's HTTP client: node:https with the service's CA and the client certificate from a certificate folder
 * (ca.pem, client.pem, client-key.pem, as the services generate them), a bearer token, JSON in and out. A non-2xx
 * answer becomes a CliError carrying the API's own message (never a stack trace).
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';

/** Exit codes scripts can rely on (docs/cli.md). */
export const EXIT = { ok: 0, failed: 1, usage: 2, problems: 3 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface Endpoint {
  server: string;
  certDir: string;
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | undefined>;
}

function readCert(dir: string, name: string): string {
  const p = path.join(dir, name);
  try {
    return fs.readFileSync(p, 'utf8');
  } catch {
    throw new CliError(`cannot read ${p}: give the folder holding ca.pem, client.pem and client-key.pem (--cert-dir)`);
  }
}

export class ApiClient {
  private readonly agent: https.Agent;

  constructor(
    readonly endpoint: Endpoint,
    public token?: string,
  ) {
    const d = endpoint.certDir;
    this.agent = new https.Agent({
      ca: readCert(d, 'ca.pem'),
      cert: readCert(d, 'client.pem'),
      key: readCert(d, 'client-key.pem'),
      keepAlive: true,
      maxSockets: 8,
    });
  }

  close(): void {
    this.agent.destroy();
  }

  async call<T = unknown>(method: string, p: string, body?: unknown): Promise<T> {
    return (await this.send<T>(method, p, body)).body;
  }

  send<T = unknown>(method: string, p: string, body?: unknown): Promise<Answer<T>> {
    const url = new URL(p, this.endpoint.server);
    const headers: Record<string, string> = { accept: 'application/json' };
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    if (payload) headers['content-type'] = 'application/json';
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method, headers, agent: this.agent, timeout: 120_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON: keep the text */
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ status, body: parsed as T, headers: res.headers });
          else reject(apiError(method, url.pathname, status, parsed));
        });
      });
      req.on('timeout', () => req.destroy(new Error('no answer within 120 s')));
      req.on('error', (e: Error) => reject(new CliError(`${url.origin}: ${e.message}`)));
      if (payload) req.write(payload);
      req.end();
    });
  }
}

function apiError(method: string, p: string, status: number, body: unknown): CliError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as { message?: string; field?: string };
  const msg = b.message ?? (typeof body === 'string' && body ? body.slice(0, 200) : `HTTP ${status}`);
  const field = b.field ? ` (field ${b.field})` : '';
  return new CliError(`${method} ${p}: ${status} ${msg}${field}`, EXIT.failed, status);
}
