/**
 * The monitor types: one line per type (dbname → implementation). Adding a type = its file + one line here.
 * registry.test.ts proves every file in this folder is registered under its own name and every dbname has a type.
 */
import type { Logger } from 'pino';
import type { DbName, MonitorType } from './types.js';
import { createExecType } from './exec.js';
import { urlType } from './url.js';
import { apiType } from './api.js';
import { tcpType } from './tcp.js';
import { pingType } from './ping.js';
import { nslookupType } from './nslookup.js';
import { snmpType } from './snmp.js';
import { dbType } from './db.js';
import { sysType } from './sys.js';

export interface MonitorTypes {
  types: ReadonlyMap<DbName, MonitorType>;
  /** Releases what types hold (browsers). */
  close(): Promise<void>;
}

export function createMonitorTypes(deps: { log: Logger }): MonitorTypes {
  const exec = createExecType({ log: deps.log.child({ component: 'browser' }) });
  const types = new Map<DbName, MonitorType>([
    ['exec', exec.type],
    ['url', urlType],
    ['api', apiType],
    ['tcp', tcpType],
    ['ping', pingType],
    ['nslookup', nslookupType],
    ['snmp', snmpType],
    ['db', dbType],
    ['sys', sysType],
  ]);
  return { types, close: () => exec.close() };
}
