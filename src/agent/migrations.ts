/**
 * The discovery agent's store migrations and format versions (after core's: src/core/platform/core-migrations.ts).
 * HOW TO ADD ONE: append `{ id: '<yyyy-mm-dd>-<what>', description, up }` at the END of AGENT_MIGRATIONS (never
 * reorder, rename or remove an entry), make `up` idempotent, bump the format in AGENT_FORMATS, and add an upgrade
 * fixture of the old format (docs/storage.md "Adding a migration").
 */
import type { Migration } from '../core/storage/migrations.js';

export const AGENT_FORMATS: Record<string, number> = {
  /** 2: records `settings` and `smtp` are the shared settings service's (one string per key; the sealed SMTP
   * password under its API key `smtpPwd`, was `smtpPwdSealed`). */
  SETTINGS: 2,
  METRICS: 1,
  THRESHOLDS: 1,
  STATUS: 1,
  STATUS_HISTORY: 1,
  'discover_metrics.json': 1,
};

export const AGENT_MIGRATIONS: readonly Migration[] = [
  {
    id: '2026-11-26-agent-smtp-password-key',
    description: 'SETTINGS/smtp: the sealed password moves from smtpPwdSealed to smtpPwd (the shared settings service)',
    async up({ store }) {
      const b = store.bucket('SETTINGS');
      const smtp = await b.get<Record<string, unknown>>('smtp');
      // Idempotent: a record without smtpPwdSealed is already in the new format (or has no password).
      if (!smtp || !('smtpPwdSealed' in smtp)) return;
      const { smtpPwdSealed, ...rest } = smtp;
      await b.put('smtp', { ...rest, smtpPwd: rest.smtpPwd ?? smtpPwdSealed });
    },
  },
];
