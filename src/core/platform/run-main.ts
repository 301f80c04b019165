/**
 * The foreground runner both services' main.ts use: start with umask 077 (docs/security.md §11), print where to
 * connect, stop gracefully on SIGINT/SIGTERM (a second signal exits at once), and turn start-up failures (a port in
 * use, an unreadable certificate) into one clear line and exit code 1.
 *
 * Two rules keep a stop from hanging (the clean-clone CI hung 10 minutes on the second one):
 * - One stop request often arrives as several signals: a process-group SIGTERM (systemd's control group,
 *   `kill -- -pgid`, Ctrl-C on a terminal) reaches the service and also `npm start`'s supervisor, which forwards it.
 *   A repeat within SIGNAL_REPEAT_MS of the first is the same request; only a later one forces the exit.
 * - The forced exit is SIGKILL to itself, never `process.exit()`: exit joins libuv's thread pool, and an LMDB write
 *   transaction in flight waits there for the main thread, which then waits for it, for ever. LMDB is crash-safe: the
 *   write in flight is simply not committed.
 */
import path from 'node:path';
import type { ServiceConfig } from '../config/env.js';
import { SERVICE_UMASK } from './file-modes.js';

/** A second signal sooner than this after the first is a duplicate delivery of the same stop request. */
export const SIGNAL_REPEAT_MS = 1_000;

/**
 * Tells apart the stop signals a process gets: the first, a duplicate delivery of it (sooner than SIGNAL_REPEAT_MS
 * after the first) and a second request that forces the exit. One rule for the services and `npm start`'s supervisor.
 */
export function stopSignals(now: () => number = Date.now): () => 'first' | 'duplicate' | 'force' {
  let firstMs: number | undefined;
  return () => {
    const t = now();
    if (firstMs === undefined) {
      firstMs = t;
      return 'first';
    }
    return t - firstMs < SIGNAL_REPEAT_MS ? 'duplicate' : 'force';
  };
}

/** Ends the process now without `process.exit()` (see the header: it can deadlock with an LMDB write in flight). */
export function exitNow(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not end the process');
}

export interface Runnable {
  start(): Promise<string>;
  stop(): Promise<void>;
}

export async function runInForeground(
  cfg: ServiceConfig,
  label: string,
  loginHint: string,
  create: () => Promise<Runnable>,
): Promise<void> {
  // Nothing the service or its libraries create (LMDB, logs, screenshots, browser profiles) is readable by others.
  process.umask(SERVICE_UMASK);
  let svc: Runnable;
  let url: string;
  try {
    svc = await create();
    url = await svc.start();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why =
      err.code === 'EADDRINUSE'
        ? `port ${cfg.port} is already in use (set ${cfg.service === 'monitor' ? 'MONITOR_PORT' : 'AGENT_PORT'})`
        : err.message;
    console.error(`${label} could not start: ${why}`);
    process.exit(1);
  }
  const c = cfg.certDir;
  const base = url.replace('127.0.0.1', 'localhost');
  console.log(`${label} listening on ${base} (mutual TLS)
  client certificate: ${path.join(c, 'client.pem')} (key ${path.join(c, 'client-key.pem')}; for browsers ${path.join(c, 'client.p12')}, password in ${path.join(c, 'client.p12.password')})
  try: curl --cacert ${path.join(c, 'ca.pem')} --cert ${path.join(c, 'client.pem')} --key ${path.join(c, 'client-key.pem')} ${base}/ping
  log in: ${loginHint}; API docs at ${base}/docs/index.html`);
  // First SIGINT/SIGTERM: graceful stop (no new runs; in-flight work gets SHUTDOWN_TIMEOUT_MS; flush; close; exit 0).
  // A second one, at least SIGNAL_REPEAT_MS later: exit at once (SIGKILL). A stop that fails ends the same way: the
  // store may still have a write in flight, which process.exit() would wait for for ever.
  const classify = stopSignals();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      const kind = classify();
      if (kind === 'duplicate') return;
      if (kind === 'force') {
        console.error(`${label}: second ${sig}, exiting now`);
        exitNow();
      }
      console.log(`${label}: ${sig} received, stopping (in-flight work gets up to ${cfg.shutdownTimeoutMs} ms)`);
      svc.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(`${label}: stop failed, exiting now: ${(err as Error)?.message ?? String(err)}`);
          exitNow();
        },
      );
    });
  }
}
