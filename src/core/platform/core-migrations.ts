/**
 * Migrations of the formats core owns in both services' stores (users, tokens, settings, meta) and the versions of
 * those formats. HOW TO ADD ONE (docs/storage.md "Adding a migration"): append `{ id, description, up }` at the END
 * of CORE_MIGRATIONS (never reorder, rename or remove an entry), make `up` idempotent, bump the format's number in
 * CORE_FORMATS, and commit an upgrade fixture of the old format (test/upgrade/). Service-owned formats register in
 * src/monitor/migrations.ts or src/agent/migrations.ts instead.
 */
import { randomUUID } from 'node:crypto';
import type { Migration } from '../storage/migrations.js';

export const CORE_FORMATS: Record<string, number> = {
  meta: 1,
  users: 2,
  tokens: 2,
  'revoked-tokens': 1,
  settings: 1,
};

/**
 * A service's whole migration list and format record: core's first, then the service's own (the order a store
 * records them in). The platform migrates with it at start; the seed kit and the upgrade test compose it the same way.
 */
export function withCoreMigrations(
  migrations: readonly Migration[] = [],
  formats: Record<string, number> = {},
): { migrations: Migration[]; formats: Record<string, number> } {
  return { migrations: [...CORE_MIGRATIONS, ...migrations], formats: { ...CORE_FORMATS, ...formats } };
}

export const CORE_MIGRATIONS: readonly Migration[] = [
  {
    id: '2026-11-26-format-baseline',
    description: 'mark the store as format-versioned (the formats of 0.1.0, unchanged)',
    async up() {
      // The formats of 0.1.0 are the baseline: nothing to rewrite. Recording this id is what makes a store versioned.
    },
  },
  {
    id: '2026-11-26-users-token-binding',
    description: 'users: each record gets uid, tokenVersion 1 and legacyTokensBeforeMs (security §6)',
    async up({ store, log }) {
      const users = store.bucket('users');
      const old: Array<{ key: string; value: Record<string, unknown> }> = [];
      for await (const { key, value } of users.range<Record<string, unknown>>()) {
        if (typeof value.uid !== 'string' || typeof value.tokenVersion !== 'number')
          old.push({ key: String(key), value });
      }
      const now = Date.now();
      for (const { key, value } of old) {
        await users.put(key, { ...value, uid: randomUUID(), tokenVersion: 1, legacyTokensBeforeMs: now });
      }
      if (old.length > 0)
        log.info({ users: old.map((u) => u.key) }, 'users given a token identity (uid, tokenVersion)');
    },
  },
  {
    id: '2026-11-26-token-rotation',
    description: 'tokens: refresh rotates (bucket revoked-tokens, tracked records may say replacedBy)',
    async up() {
      // Nothing to convert: old records read as before. Recording the id makes an older build, which would ignore
      // the revoked-tokens bucket and accept tokens replaced by a refresh, refuse this store.
    },
  },
];
