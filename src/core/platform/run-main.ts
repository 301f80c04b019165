/**
 * The foreground runner both services' main.ts use: start with umask 077 (docs/security.md §11), print where to
 * connect, stop gracefully on SIGINT/SIGTERM (a second signal exits at once), and turn start-up failures (a port in
 * use, an unreadable certificate) into one clear line and exit code 1.
 */
import path from 'node:path';
import type { ServiceConfig } from '../config/env.js';
import { SERVICE_UMASK } from './file-modes.js';

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
  // A second one: exit at once (code 1).
  let stopping = false;
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      if (stopping) {
        console.error(`${label}: second ${sig}, exiting now`);
        process.exit(1);
      }
      stopping = true;
      console.log(`${label}: ${sig} received, stopping (in-flight work gets up to ${cfg.shutdownTimeoutMs} ms)`);
      svc.stop().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}
