/** `npm run monitor`: the monitor service in the foreground. */
import path from 'node:path';
import { readConfig } from '../core/config/env.js';
import { createMonitorService } from './service.js';

const cfg = readConfig('monitor');
const svc = await createMonitorService(cfg);
const url = await svc.start();
const c = cfg.certDir;
console.log(`Monitor service listening on ${url.replace('127.0.0.1', 'localhost')} (mutual TLS)
  client certificate: ${path.join(c, 'client.pem')} (key ${path.join(c, 'client-key.pem')}; for browsers ${path.join(c, 'client.p12')}, password in ${path.join(c, 'client.p12.password')})
  try: curl --cacert ${path.join(c, 'ca.pem')} --cert ${path.join(c, 'client.pem')} --key ${path.join(c, 'client-key.pem')} ${url.replace('127.0.0.1', 'localhost')}/ping
  log in: POST /login {"username":"admin","password":"..."}; API docs at /docs/index.html`);
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    svc.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
