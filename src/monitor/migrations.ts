/**
 * The monitor service's store migrations and format versions (after core's: src/core/platform/core-migrations.ts).
 * HOW TO ADD ONE: append `{ id: '<yyyy-mm-dd>-<what>', description, up }` at the END of MONITOR_MIGRATIONS (never
 * reorder, rename or remove an entry), make `up` idempotent (it may meet records already converted), bump the format
 * in MONITOR_FORMATS, and add an upgrade fixture of the old format (docs/storage.md "Adding a migration").
 */
import type { Migration } from '../core/storage/migrations.js';

export const MONITOR_FORMATS: Record<string, number> = {
  monitors: 1,
  secrets: 1,
  /** hist.raw values (result-codec.ts; the chunk also carries its own version byte). */
  'hist.chunk': 1,
  /** hist.day values (rollup.ts; own version byte). */
  'hist.day': 1,
  /** hist.wal records (history-wal.ts: dbname byte table + 1-row chunks). */
  'hist.wal': 1,
  /** The byte tables DBNAMES → code and STATUSES → code (pinned by format-tables.test.ts). */
  'enum.dbnames': 1,
  'enum.statuses': 1,
  alert_state: 1,
  alert_queue: 1,
  alert_channels: 1,
  maintenance: 1,
  artifacts: 1,
  /** The certificate inventory (certificates/cert-inventory.ts; each record carries v: 1). */
  certificates: 1,
};

export const MONITOR_MIGRATIONS: readonly Migration[] = [];
