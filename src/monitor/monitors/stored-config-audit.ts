/**
 * At start, every stored monitor is checked against its type's current validation once, in the background: a
 * configuration stored before a check existed (a pattern RE2 cannot run, a client certificate given as a server path,
 * a db statement the guard refuses) is logged once as a warning naming the monitor and the field. Such a monitor is
 * kept and scheduled; its runs end EXCEPTION naming the same field until it is updated (docs/security.md §3, §4, §8).
 * The run configs it makes are not kept (`plainConfig(m, false)`): the runs make and keep their own. Each is validated
 * as a mutable copy: before, api's validate normalised `typeApi` in the frozen run config, the TypeError ended the
 * audit at the first stored api monitor, and no monitor after it was checked.
 */
import type { Logger } from 'pino';
import { isAppError } from '../../core/errors.js';
import type { DbName, MonitorType } from '../monitor-types/types.js';
import type { MonitorsService } from './monitors.service.js';

const SLICE = 200;

/** Resolves to the number of monitors whose stored configuration is refused. */
export async function auditStoredConfigs(
  monitors: MonitorsService,
  types: ReadonlyMap<DbName, MonitorType>,
  log: Logger,
): Promise<number> {
  let refused = 0;
  const all = monitors.list();
  for (let i = 0; i < all.length; i++) {
    if (i > 0 && i % SLICE === 0) await new Promise((r) => setImmediate(r));
    const m = all[i]!;
    try {
      // A copy: a type's validate may normalise fields in place (api's typeApi), and run configs are frozen.
      types.get(m.type)?.validate?.({ ...monitors.plainConfig(m, false) });
    } catch (e) {
      if (!isAppError(e)) throw e;
      refused++;
      log.warn(
        { monitor: m.name, type: m.type, field: e.field, reason: e.message },
        'stored monitor configuration is refused by this version: its runs end EXCEPTION until it is updated',
      );
    }
  }
  return refused;
}
