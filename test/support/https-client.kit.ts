/** A small mTLS JSON client for integration tests and benches (node:https, keep-alive). */
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';

export interface ClientCerts {
  ca: string;
  cert?: string;
  key?: string;
}

export interface Res<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
  raw: Buffer;
}

export function certsFrom(certDir: string): Required<ClientCerts> {
  const r = (n: string) => fs.readFileSync(path.join(certDir, n), 'utf8');
  return { ca: r('ca.pem'), cert: r('client.pem'), key: r('client-key.pem') };
}

export class HttpsClient {
  readonly agent: https.Agent;
  token?: string;

  constructor(
    readonly baseUrl: string,
    certs: ClientCerts,
    keepAlive = true,
  ) {
    this.agent = new https.Agent({ keepAlive, ca: certs.ca, cert: certs.cert, key: certs.key, maxSockets: 64 });
  }

  request<T = any>(
    method: string,
    p: string,
    opts: { body?: unknown; rawBody?: string | Buffer; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Res<T>> {
    const url = new URL(p, this.baseUrl);
    const headers: Record<string, string> = { ...opts.headers };
    let payload: Buffer | undefined;
    if (opts.rawBody !== undefined) payload = Buffer.from(opts.rawBody);
    else if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] ??= 'application/json';
    }
    if (payload && !headers['content-type']) headers['content-type'] = 'application/json';
    const token = opts.token === undefined ? this.token : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const text = raw.toString('utf8');
          let body: any = text;
          if (String(res.headers['content-type'] ?? '').includes('json') && text) {
            try {
              body = JSON.parse(text);
            } catch {
              body = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text, raw });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload) req.end(payload);
      else req.end();
    });
  }

  async login(username: string, password: string, p = '/login'): Promise<string> {
    const r = await this.request('POST', p, { body: { username, password }, token: null });
    if (r.status !== 200) throw new Error(`login failed ${r.status} ${r.text}`);
    this.token = r.body.token;
    return r.body.token;
  }

  close(): void {
    this.agent.destroy();
  }
}

/**
 * One JSON POST on a fresh connection from a chosen loopback source address (the service sees it as the client
 * address: login throttling tests).
 */
export function postFrom(
  baseUrl: string,
  certs: ClientCerts,
  p: string,
  localAddress: string,
  body: unknown,
): Promise<{ status: number; retryAfter?: string; body: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(p, baseUrl),
      {
        method: 'POST',
        localAddress,
        agent: false,
        ...certs,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
