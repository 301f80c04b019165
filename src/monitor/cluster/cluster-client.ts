/**
 * Requests from one cluster instance to another (docs/cluster.md): HTTPS to the other's `address` (from
 * cluster_members) over mutual TLS with the shared client certificate, marked with FORWARDED_HEADER so the receiver
 * handles it itself (a forwarded request is never forwarded again) and signed with a peer proof (core/auth/peer-proof.ts)
 * for its method and target. Used to send a monitor's run now and push pings to the instance holding its shard lease
 * (run-forward.ts, push/push.service.ts) and to ask a holder for a series' rows (series-fetch.ts). The receiver's
 * answer comes back as it was given: its JSON on 200, its error (code, message, field, Retry-After) otherwise.
 * The receiver honours FORWARDED_HEADER only with a valid proof (`forwardedByPeer`): a client cannot set it to make an
 * instance that does not hold a monitor run it or take its ping (the header alone is ignored).
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { PEER_PROOF_HEADER, type PeerProof } from '../../core/auth/peer-proof.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../../core/errors.js';
import { httpRequest } from '../../core/notify/http-post.js';

/** Set on a forwarded request: the receiver handles it itself (never forwards twice). */
export const FORWARDED_HEADER = 'x-sentinel-forwarded-run';

/**
 * Whether a request was forwarded by another member: FORWARDED_HEADER with a valid peer proof for its method and
 * target. Without the proof (a client set the header; no cluster here) it is handled as a direct request.
 */
export function forwardedByPeer(
  req: { method: string; url: string; headers: Record<string, string | string[] | undefined> },
  peers: Pick<PeerProof, 'checkRequest'> | undefined,
): boolean {
  return req.headers[FORWARDED_HEADER] === '1' && peers !== undefined && peers.checkRequest(req) === undefined;
}

export interface ClusterClient {
  /**
   * Sends `method path` to the instance at `address`; resolves the 200 answer's JSON, throws the receiver's error as
   * an AppError, and rejects with a non-AppError when the instance cannot be reached.
   */
  send(
    address: string,
    path: string,
    o: {
      method: 'GET' | 'POST';
      headers?: Record<string, string>;
      body?: string;
      /** A longer deadline for this request than the client's (never a shorter one): a slow monitor's run now. */
      timeoutMs?: number;
    },
  ): Promise<unknown>;
}

/** `peers` (Platform.peers) signs every request with the peer proof for its method and target. */
export function createClusterClient(certDir: string, timeoutMs: number, peers: Pick<PeerProof, 'sign'>): ClusterClient {
  let agent: https.Agent | undefined;
  const agentFor = () =>
    (agent ??= new https.Agent({
      ca: fs.readFileSync(path.join(certDir, 'ca.pem')),
      cert: fs.readFileSync(path.join(certDir, 'client.pem')),
      key: fs.readFileSync(path.join(certDir, 'client-key.pem')),
      keepAlive: true,
    }));
  return {
    async send(address, urlPath, o) {
      const res = await httpRequest(`${address}${urlPath}`, o.body, 'cluster', {
        method: o.method,
        agent: agentFor(),
        timeoutMs: Math.max(timeoutMs, o.timeoutMs ?? 0),
        headers: { ...o.headers, [FORWARDED_HEADER]: '1', [PEER_PROOF_HEADER]: peers.sign(o.method, urlPath) },
      });
      const body = JSON.parse(res.body) as { error?: string; message?: string; field?: string };
      if (res.status === 200) return body;
      const code = (body.error && body.error in ERROR_CODES ? body.error : 'UNAVAILABLE') as ErrorCode;
      const retryAfterS = Number(res.headers['retry-after']) || undefined;
      throw new AppError(code, body.message ?? `the other instance answered ${res.status}`, {
        field: body.field,
        retryAfterS,
      });
    },
  };
}
