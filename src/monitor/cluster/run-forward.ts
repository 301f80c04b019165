/**
 * Run now in a cluster (docs/cluster.md): the run is sent to the instance holding the monitor's shard lease, so the
 * one instance that schedules a monitor is also the one that records its results (one writer per history series;
 * the holder's details, last result and alerting see the run). The caller's bearer token goes along (every instance
 * accepts every instance's tokens) over mutual TLS with the shared client certificate; the holder answers as if
 * asked directly. A request already forwarded, a monitor held here or held by nobody, or a holder that cannot be
 * reached runs here, as before (logged).
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import type { Logger } from 'pino';
import { AppError, ERROR_CODES, type ErrorCode } from '../../core/errors.js';
import { httpRequest } from '../../core/notify/http-post.js';

/** Set on a forwarded run: the receiver runs it itself (never forwards twice). */
export const FORWARDED_HEADER = 'x-sentinel-forwarded-run';

export interface RunCaller {
  authorization?: string;
  forwarded: boolean;
}

export type RunNow = (name: string, full: boolean, caller: RunCaller) => Promise<unknown>;

export interface RunForwardDeps {
  certDir: string;
  timeoutMs: number;
  log: Logger;
  /** The base URL of the live instance holding the monitor's lease, when that is another instance. */
  holderAddress: (name: string) => string | undefined;
  /** Runs here. */
  local: (name: string, full: boolean) => Promise<unknown>;
}

export function createRunForwarding(d: RunForwardDeps): RunNow {
  let agent: https.Agent | undefined;
  const agentFor = () =>
    (agent ??= new https.Agent({
      ca: fs.readFileSync(path.join(d.certDir, 'ca.pem')),
      cert: fs.readFileSync(path.join(d.certDir, 'client.pem')),
      key: fs.readFileSync(path.join(d.certDir, 'client-key.pem')),
      keepAlive: true,
    }));
  return async (name, full, caller) => {
    const address = caller.forwarded || !caller.authorization ? undefined : d.holderAddress(name);
    if (!address) return d.local(name, full);
    const url = `${address}/monitor/run/${encodeURIComponent(name)}/${full ? 'show' : 'hide'}`;
    let res;
    try {
      res = await httpRequest(url, undefined, 'cluster', {
        method: 'GET',
        agent: agentFor(),
        timeoutMs: d.timeoutMs,
        headers: { authorization: caller.authorization!, [FORWARDED_HEADER]: '1' },
      });
    } catch (err) {
      d.log.warn({ err, monitor: name, holder: address }, 'run now: lease holder unreachable, running here');
      return d.local(name, full);
    }
    const body = JSON.parse(res.body) as { error?: string; message?: string; field?: string };
    if (res.status === 200) return body;
    const code = (body.error && body.error in ERROR_CODES ? body.error : 'UNAVAILABLE') as ErrorCode;
    throw new AppError(code, body.message ?? `run now on the lease holder failed (${res.status})`, {
      field: body.field,
    });
  };
}
