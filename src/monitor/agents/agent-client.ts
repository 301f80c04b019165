/**
 * The monitor service's client of a registered discovery agent: `GET /getProcessByPort/{port}` and `GET /api/metrics`
 * (agent spec §4) with the agent's component token, over mutual TLS — the service's client certificate
 * (`DATA_DIR/certs/client.pem`) and only the registered CA (else the service's own `ca.pem`) trusted, never the
 * system roots. The agent's address passes the network policy like any monitor target. Each call is bounded by
 * `timeoutMs` and answers at most 64 KB.
 */
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { CERT_FILES } from '../../core/pki/certs.js';
import type { NetworkPolicy } from '../monitor-types/types.js';
import { resolveChecked } from '../monitor-types/lib/network-policy.js';
import type { AgentTarget } from './agent-registry.js';

const MAX_BODY_BYTES = 64 * 1024;

/** The agent's answer about a port: the owner (agent's PORT_OWNER), or nothing listening (404). */
export type PortAnswer =
  | { listening: false }
  | {
      listening: true;
      pid: number | null;
      name?: string;
      user?: string;
      cpuPct?: number;
      rssBytes?: number;
      memPct?: number;
      startTimeMs?: number;
    };

export interface HostLoad {
  cpuPct: number;
  memUsedPct: number;
  load1: number;
}

export interface AgentClient {
  processByPort(agent: AgentTarget, port: number): Promise<PortAnswer>;
  hostLoad(agent: AgentTarget): Promise<HostLoad>;
}

export function createAgentClient(deps: {
  certDir: string;
  timeoutMs: number;
  policy: () => NetworkPolicy;
}): AgentClient {
  const pem = (f: string) => fs.readFileSync(path.join(deps.certDir, f), 'utf8');
  let own: { ca: string; cert: string; key: string } | undefined;
  const certs = () =>
    (own ??= { ca: pem(CERT_FILES.ca), cert: pem(CERT_FILES.client), key: pem(CERT_FILES.clientKey) });

  async function get(agent: AgentTarget, p: string): Promise<{ status: number; body: unknown }> {
    const u = new URL(agent.url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const signal = AbortSignal.timeout(deps.timeoutMs);
    const target = await resolveChecked(deps.policy(), host);
    const c = certs();
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: target.address,
          port: u.port ? Number(u.port) : 443,
          path: p,
          method: 'GET',
          servername: net.isIP(host) === 0 ? host : undefined,
          ca: agent.caCert ?? c.ca,
          cert: c.cert,
          key: c.key,
          headers: { authorization: `Bearer ${agent.token()}`, accept: 'application/json' },
          signal,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (b: Buffer) => {
            size += b.length;
            if (size > MAX_BODY_BYTES) req.destroy(new Error('agent answer larger than 64 KB'));
            else chunks.push(b);
          });
          res.on('end', () => {
            try {
              resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
            } catch {
              reject(new Error(`agent answered ${res.statusCode} without JSON`));
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', (e) =>
        reject(signal.aborted ? new Error(`agent did not answer within ${deps.timeoutMs} ms`) : e),
      );
      req.end();
    });
  }

  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const str = (v: unknown) => (typeof v === 'string' ? v.slice(0, 256) : undefined);

  return {
    async processByPort(agent, port) {
      const r = await get(agent, `/getProcessByPort/${port}`);
      if (r.status === 404) return { listening: false };
      if (r.status !== 200) throw new Error(`agent answered ${r.status} to getProcessByPort`);
      const b = r.body as Record<string, unknown>;
      return {
        listening: true,
        pid: num(b.pid) ?? null,
        name: str(b.name),
        user: str(b.user),
        cpuPct: num(b.cpuPct),
        rssBytes: num(b.rssBytes),
        memPct: num(b.memPct),
        startTimeMs: num(b.startTimeMs),
      };
    },
    async hostLoad(agent) {
      const r = await get(agent, '/api/metrics');
      if (r.status !== 200) throw new Error(`agent answered ${r.status} to /api/metrics`);
      const b = r.body as { cpu?: { totalPct?: unknown }; memory?: { usedPct?: unknown }; load?: { load1?: unknown } };
      return {
        cpuPct: num(b.cpu?.totalPct) ?? 0,
        memUsedPct: num(b.memory?.usedPct) ?? 0,
        load1: num(b.load?.load1) ?? 0,
      };
    },
  };
}
