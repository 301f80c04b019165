/**
 * The monitor types: one line per type (dbname → implementation). Adding a type = its file + one line here.
 * registry.test.ts proves every file in this folder is registered under its own name and every dbname has a type.
 */
import type { Logger } from 'pino';
import type { DbName, MonitorType } from './types.js';
import { createExecType } from './exec.js';
import { createUrlType } from './url.js';
import { createApiType } from './api.js';
import { createRegexRunner } from './lib/safe-regex.js';
import { tcpType } from './tcp.js';
import { pingType } from './ping.js';
import { nslookupType } from './nslookup.js';
import { snmpType } from './snmp.js';
import { dbType } from './db.js';
import { sysType } from './sys.js';
import { createPushType } from './push.js';
import { PushLedger } from '../push/push-ledger.js';

export interface MonitorTypes {
  types: ReadonlyMap<DbName, MonitorType>;
  /** Releases what types hold (browsers). */
  close: () => Promise<void>;
}

export function createMonitorTypes(deps: { log: Logger; dataDir?: string; pushLedger?: PushLedger }): MonitorTypes {
  // One regex worker pool for every type that runs user patterns (url, api, exec steps).
  const regex = createRegexRunner();
  const exec = createExecType({ log: deps.log.child({ component: 'browser' }), regex });
  const types = new Map<DbName, MonitorType>([
    ['exec', exec.type],
    ['url', createUrlType(regex)],
    ['api', createApiType({ regex, dataDir: deps.dataDir })],
    ['tcp', tcpType],
    ['ping', pingType],
    ['nslookup', nslookupType],
    ['snmp', snmpType],
    ['db', dbType],
    ['sys', sysType],
    ['push', createPushType(deps.pushLedger ?? new PushLedger())],
  ]);
  return { types, close: async () => (await exec.close(), await regex.close()) };
}
