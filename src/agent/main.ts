/** `npm run agent` / the `discovery_agent` bin: the discovery agent in the foreground (port AGENT_PORT, 8070). */
import path from 'node:path';
import { readConfig } from '../core/config/env.js';
import { createAgentService } from './service.js';

const cfg = readConfig('agent');
const svc = await createAgentService(cfg);
const url = await svc.start();
const c = cfg.certDir;
console.log(`discovery_agent listening on ${url.replace('127.0.0.1', 'localhost')} (mutual TLS)
  client certificate: ${path.join(c, 'client.pem')} (key ${path.join(c, 'client-key.pem')})
  try: curl --cacert ${path.join(c, 'ca.pem')} --cert ${path.join(c, 'client.pem')} --key ${path.join(c, 'client-key.pem')} ${url.replace('127.0.0.1', 'localhost')}/ping
  log in: POST /api/auth {"username":"admin","password":"..."}; API docs at /docs/index.html`);
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    svc.stop().then(() => process.exit(0), () => process.exit(1));
  });
}
