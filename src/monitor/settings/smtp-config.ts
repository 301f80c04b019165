/**
 * POST /setsmtpvault: stores the SMTP settings, then probes the server they name (core/notify/smtp-probe.ts) and
 * answers with the stored settings plus what the probe found and what sending will use. The settings are stored
 * even when the probe fails (a server that is down now may be up later); the answer says so in `message`.
 */
import type { SettingsService } from '../../core/settings/settings.service.js';
import { probeSmtp, type SmtpProbeOptions, type SmtpProbeResult } from '../../core/notify/smtp-probe.js';

export interface SmtpConfig {
  set(patch: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export function createSmtpConfig(smtp: SettingsService, opts: SmtpProbeOptions = {}): SmtpConfig {
  return {
    async set(patch) {
      const view = await smtp.update(patch);
      const host = smtp.get('smtpHost') ?? '';
      if (host === '') return { ...view, message: 'SMTP settings stored; no smtpHost, so nothing was probed' };
      const probe: SmtpProbeResult = await probeSmtp(
        {
          smtpHost: host,
          smtpPort: smtp.get('smtpPort'),
          smtpUser: smtp.get('smtpUser'),
          smtpPassword: smtp.get('smtpPassword'),
          smtpSecure: smtp.get('smtpSecure'),
        },
        opts,
      );
      const message = probe.ok
        ? `SMTP settings stored; probe OK: ${probe.willUse}`
        : `SMTP settings stored, but mail will not go out as configured: ${probe.willUse}`;
      return { ...view, message, probe };
    },
  };
}
