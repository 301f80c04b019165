/**
 * Run now in a cluster (docs/cluster.md): the run is sent to the instance holding the monitor's shard lease, so the
 * one instance that schedules a monitor is also the one that records its results (one writer per history series;
 * the holder's details, last result and alerting see the run). The caller's bearer token goes along (every instance
 * accepts every instance's tokens) over mutual TLS with the shared client certificate (cluster-client.ts); the
 * holder answers as if asked directly. A request already forwarded, a monitor held here or held by nobody, or a
 * holder that cannot be reached runs here, as before (logged). The holder is waited for as long as the monitor's run may
 * take (every attempt to its timeout) plus FORWARD_MARGIN_MS, at least the request timeout: a slow check is not
 * taken for an unreachable holder and run a second time here.
 * The run is readable on the instance asked when its answer arrives: the holder flushes its history before it answers
 * a forwarded run (`publish`: the result is in the shared WAL), and the instance asked reads the WAL's new records
 * before it answers (`follow`), so its last result and details show the run at once, not a flush later.
 */
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { settleWithin } from '../../core/platform/drain.js';
import type { ClusterClient } from './cluster-client.js';

export interface RunCaller {
  authorization?: string;
  forwarded: boolean;
}

export type RunNow = (name: string, full: boolean, caller: RunCaller) => Promise<unknown>;

export interface RunForwardDeps {
  client: ClusterClient;
  log: Logger;
  /** The base URL of the live instance holding the monitor's lease, when that is another instance. */
  holderAddress: (name: string) => string | undefined;
  /** Runs here. */
  local: (name: string, full: boolean) => Promise<unknown>;
  /**
   * The longest a run of the monitor may take (its timeout and grace, times its attempts): the holder is given that
   * and FORWARD_MARGIN_MS before it counts as unreachable, so a slow check is not run a second time here.
   */
  longestRunMs?: (name: string) => number | undefined;
  /** Holder: makes what was just recorded readable by every instance (history flush). */
  publish?: () => Promise<void>;
  /** Instance asked: reads what the other instances made readable (history sync). */
  follow?: () => Promise<void>;
  /** The longest the answer waits for `publish` or `follow` (default 2 s, the history's flush interval). */
  settleMs?: number;
}

/** What a forwarded run may take beyond the monitor's own bound: the holder's queue, the network, the answer. */
export const FORWARD_MARGIN_MS = 10_000;

export function createRunForwarding(d: RunForwardDeps): RunNow {
  /**
   * A step after the run, waited for at most `settleMs`: a failure or a slow step is logged, never the answer's (the
   * result is recorded all the same, and readable everywhere after the next timed flush).
   */
  const settleMs = d.settleMs ?? 2000;
  const settle = async (step: (() => Promise<void>) | undefined, what: string, name: string): Promise<void> => {
    if (!step) return;
    const done = step().catch((err: unknown) => d.log.warn({ err, monitor: name }, `run now: ${what} failed`));
    if (!(await settleWithin(done, settleMs)))
      d.log.warn({ monitor: name }, `run now: ${what} took longer than ${settleMs} ms; answered without it`);
  };
  return async (name, full, caller) => {
    const address = caller.forwarded || !caller.authorization ? undefined : d.holderAddress(name);
    if (!address) {
      const result = await d.local(name, full);
      if (caller.forwarded) await settle(d.publish, 'publishing the result', name);
      return result;
    }
    let result: unknown;
    const longestMs = d.longestRunMs?.(name);
    try {
      result = await d.client.send(address, `/monitor/run/${encodeURIComponent(name)}/${full ? 'show' : 'hide'}`, {
        method: 'GET',
        headers: { authorization: caller.authorization! },
        timeoutMs: Number.isFinite(longestMs) ? longestMs! + FORWARD_MARGIN_MS : undefined,
      });
    } catch (err) {
      if (err instanceof AppError) throw err;
      d.log.warn({ err, monitor: name, holder: address }, 'run now: lease holder unreachable, running here');
      return d.local(name, full);
    }
    await settle(d.follow, "reading the holder's result", name);
    return result;
  };
}
