/** `npm run agent` / the `discovery_agent` bin: the discovery agent in the foreground (port AGENT_PORT, 8070). */
import { readConfig } from '../core/config/env.js';
import { runInForeground } from '../core/platform/run-main.js';
import { createAgentService } from './service.js';

const cfg = readConfig('agent');
await runInForeground(cfg, 'discovery_agent', 'POST /api/auth {"username":"admin","password":"..."}', () =>
  createAgentService(cfg),
);
