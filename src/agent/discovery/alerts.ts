/**
 * Status-change emails through the /setsmtp settings, sent with the shared email channel (nodemailer). One email per
 * status change; a status that holds sends nothing more (the STATUS book only reports changes). Recipients: smtpTo.
 * Sending never throws into the cycle: failures are logged and counted. The email channel (nodemailer, ~14 MB of
 * RSS) is loaded on the first email, not at start: an agent without alerts never loads it.
 */
import type { Logger } from 'pino';
import type { SmtpSettings } from '../../core/notify/channels/email.js';
import type { Alert, ChannelNet } from '../../core/notify/channel.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import { csv, type AgentSettings, type SmtpConfig } from '../settings.js';
import type { StatusChange } from './status.js';

export function toSmtpSettings(c: SmtpConfig & { smtpPwd: string }): SmtpSettings {
  const port = c.smtpPort || '587';
  return {
    smtpEnabled: c.smtpEnabled,
    smtpHost: c.smtpServerName,
    smtpPort: port,
    smtpUser: c.smtpUsername || undefined,
    smtpPassword: c.smtpPwd,
    smtpFrom: c.smtpFrom || c.smtpUsername || `discovery_agent@${c.smtpServerName}`,
    smtpSecure: c.smtpTLS === 'true' ? (port === '465' ? 'tls' : 'starttls') : 'none',
  };
}

export function changeAlert(c: StatusChange, host: string): Alert {
  return {
    kind: c.to === 'OK' ? 'recovery' : 'problem',
    monitor: { name: c.key, type: 'discovery', probe: host },
    status: c.to,
    previousStatus: c.from ?? undefined,
    message: c.reason ?? (c.value === null ? undefined : `${c.key} = ${c.value}`),
    timestampMs: c.atMs,
  };
}

export interface AlertSender {
  send(changes: StatusChange[]): Promise<{ sent: number; failed: number }>;
  close(): Promise<void>;
}

export function createAlertSender(deps: {
  settings: AgentSettings;
  log: Logger;
  host: string;
  email?: { tls?: ChannelNet['smtpTls'] };
  timeoutMs?: number;
}): AlertSender {
  let channel: Promise<ChannelRegistry> | undefined;
  const getChannel = (): Promise<ChannelRegistry> =>
    (channel ??= Promise.all([
      import('../../core/notify/registry.js'),
      import('../../core/notify/channels/email.js'),
    ]).then(([r, e]) =>
      r.createChannelRegistry({ timeoutMs: deps.timeoutMs ?? 10_000, smtpTls: deps.email?.tls }, [e.emailChannel]),
    ));
  return {
    async send(changes) {
      const smtp = deps.settings.smtpWithSecret();
      const to = csv(smtp.smtpTo);
      if (changes.length === 0 || smtp.smtpEnabled !== 'true' || to.length === 0) return { sent: 0, failed: 0 };
      const s = toSmtpSettings(smtp);
      const ch = await getChannel();
      let sent = 0;
      let failed = 0;
      for (const c of changes) {
        const ac = new AbortController();
        const timer = setTimeout(() => ac.abort(), deps.timeoutMs ?? 10_000);
        try {
          const alert = { ...changeAlert(c, deps.host), recipients: to };
          await ch.send('email', alert, { ...s }, { signal: ac.signal, log: deps.log });
          sent++;
        } catch (e) {
          failed++;
          deps.log.warn({ key: c.key, status: c.to, err: (e as Error).message }, 'status alert email failed');
        } finally {
          clearTimeout(timer);
        }
      }
      return { sent, failed };
    },
    close: async () => {
      if (channel) await (await channel).close();
    },
  };
}
