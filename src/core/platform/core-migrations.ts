/**
 * Migrations of the formats core owns in both services' stores (users, tokens, settings, meta) and the versions of
 * those formats. HOW TO ADD ONE (docs/storage.md "Adding a migration"): append `{ id, description, up }` at the END
 * of CORE_MIGRATIONS (never reorder, rename or remove an entry), make `up` idempotent, bump the format's number in
 * CORE_FORMATS, and commit an upgrade fixture of the old format (test/upgrade/). Service-owned formats register in
 * src/monitor/migrations.ts or src/agent/migrations.ts instead.
 */
import type { Migration } from '../storage/migrations.js';

export const CORE_FORMATS: Record<string, number> = {
  meta: 1,
  users: 1,
  tokens: 1,
  settings: 1,
};

export const CORE_MIGRATIONS: readonly Migration[] = [
  {
    id: '2026-11-26-format-baseline',
    description: 'mark the store as format-versioned (the formats of 0.1.0, unchanged)',
    async up() {
      // The formats of 0.1.0 are the baseline: nothing to rewrite. Recording this id is what makes a store versioned.
    },
  },
];
