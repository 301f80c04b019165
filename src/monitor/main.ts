/** `npm run monitor`: the monitor service in the foreground (port MONITOR_PORT, 8051). */
import { readConfig } from '../core/config/env.js';
import { runInForeground } from '../core/platform/run-main.js';
import { createMonitorService } from './service.js';

const cfg = readConfig('monitor');
await runInForeground(cfg, 'Monitor service', 'POST /login {"username":"admin","password":"..."}', () =>
  createMonitorService(cfg),
);
