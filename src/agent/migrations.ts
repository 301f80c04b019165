/**
 * The discovery agent's store migrations and format versions (after core's: src/core/platform/core-migrations.ts).
 * HOW TO ADD ONE: append `{ id: '<yyyy-mm-dd>-<what>', description, up }` at the END of AGENT_MIGRATIONS (never
 * reorder, rename or remove an entry), make `up` idempotent, bump the format in AGENT_FORMATS, and add an upgrade
 * fixture of the old format (docs/storage.md "Adding a migration").
 */
import type { Migration } from '../core/storage/migrations.js';

export const AGENT_FORMATS: Record<string, number> = {
  SETTINGS: 1,
  METRICS: 1,
  THRESHOLDS: 1,
  STATUS: 1,
  STATUS_HISTORY: 1,
  'discover_metrics.json': 1,
};

export const AGENT_MIGRATIONS: readonly Migration[] = [];
