/**
 * Email through nodemailer with the SMTP settings of POST /setsmtpvault (smtpHost, smtpPort, smtpUser, smtpPassword,
 * smtpFrom, smtpEnabled) plus the optional `smtpSecure`: 'tls' (implicit TLS, usually port 465), 'starttls'
 * (STARTTLS required), 'none' (plain, no STARTTLS), empty = implicit TLS on port 465 else STARTTLS when offered.
 * Recipients come from the monitor: emailR when emailOnF is 'true' (the spec's per-monitor fields). Text and HTML
 * bodies. The one SMTP transport mapping of the project (`smtpTransportOptions`); `probe` (connect, TLS, AUTH, no
 * mail) is what the agent's /checkConnectIntegrators and the monitor's test check use.
 *
 * SMTP reply 4xx and connection/timeouts are retryable; 5xx replies and authentication failures are not.
 */
import { Type } from '@sinclair/typebox';
import type { Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { Alert, ChannelNet, ChannelSettingsValues, ProbeResult, SendContext } from '../channel.js';
import { ChannelError } from '../channel.js';
import { alertFacts, alertTitle, escapeMarkup } from '../alert-text.js';
import { BoolString, Secret, defineChannel } from '../channel-kit.js';

export interface SmtpSettings {
  smtpHost?: string;
  smtpPort?: string;
  smtpUser?: string;
  smtpPassword?: string;
  smtpFrom?: string;
  smtpEnabled?: string;
  smtpSecure?: string;
}

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

/** Subject, text and HTML of one alert (pure). */
export function buildEmail(alert: Alert): EmailMessage {
  const subject = alertTitle(alert).replace(/[\r\n]+/g, ' ');
  const facts = alertFacts(alert);
  const text = [
    subject,
    '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    ...(alert.message ? ['', alert.message] : []),
    '',
    '-- Sentinel monitoring',
  ].join('\n');
  const rows = facts
    .map(([k, v]) => `<tr><th align="left">${escapeMarkup(k, true)}</th><td>${escapeMarkup(v, true)}</td></tr>`)
    .join('');
  const html =
    `<!doctype html><html><body><h2>${escapeMarkup(subject, true)}</h2><table>${rows}</table>` +
    (alert.message ? `<pre>${escapeMarkup(alert.message, true)}</pre>` : '') +
    '<p style="color:#888">Sentinel monitoring</p></body></html>';
  return { subject, text, html };
}

/** nodemailer transport options for SMTP settings (the one mapping: the monitor's alerts, the agent's alerts/checks). */
export function smtpTransportOptions(
  s: SmtpSettings,
  net: Pick<ChannelNet, 'timeoutMs' | 'smtpTls'>,
  pooled: true,
): SMTPPool.Options;
export function smtpTransportOptions(
  s: SmtpSettings,
  net: Pick<ChannelNet, 'timeoutMs' | 'smtpTls'>,
  pooled: false,
): SMTPTransport.Options;
export function smtpTransportOptions(
  s: SmtpSettings,
  net: Pick<ChannelNet, 'timeoutMs' | 'smtpTls'>,
  pooled: boolean,
): SMTPPool.Options | SMTPTransport.Options {
  const port = Number(s.smtpPort || 587);
  const mode = (s.smtpSecure ?? '').toLowerCase();
  return {
    host: s.smtpHost,
    port,
    secure: mode === 'tls' || mode === 'true' || (mode === '' && port === 465),
    requireTLS: mode === 'starttls',
    ignoreTLS: mode === 'none',
    auth: s.smtpUser ? { user: s.smtpUser, pass: s.smtpPassword ?? '' } : undefined,
    ...(pooled ? { pool: true as const, maxConnections: 3 } : {}),
    connectionTimeout: net.timeoutMs,
    greetingTimeout: net.timeoutMs,
    socketTimeout: net.timeoutMs,
    tls: net.smtpTls,
  };
}

/** nodemailer loads at the first mail or probe, not at service start (≈ 15 MB resident: docs/benchmarks.md). */
async function loadNodemailer(): Promise<(typeof import('nodemailer'))['default']> {
  return (await import('nodemailer')).default;
}

/** Maps a nodemailer error to a ChannelError without echoing credentials. */
export function smtpError(err: unknown): ChannelError {
  const e = err as { code?: string; responseCode?: number; response?: string };
  const rc = e.responseCode;
  const reply = (e.response ?? '').replace(/\s+/g, ' ').slice(0, 160);
  if (e.code === 'EAUTH') return new ChannelError(`email: authentication failed${rc ? ` (${rc})` : ''}`, false);
  if (rc !== undefined && rc >= 500) return new ChannelError(`email: SMTP ${rc} ${reply}`.trim(), false);
  if (rc !== undefined && rc >= 400) return new ChannelError(`email: SMTP ${rc} ${reply}`.trim(), true);
  if (e.code === 'EENVELOPE') return new ChannelError('email: invalid envelope', false);
  if (e.code === 'ETIMEDOUT' || e.code === 'ETIMEOUT') return new ChannelError('email: timeout', true);
  return new ChannelError(`email: ${e.code ?? 'send failed'}`, true);
}

/**
 * Connects, negotiates TLS as configured and logs in (nodemailer's verify()), sends no mail. Bounded by
 * `net.timeoutMs` whatever the server does (a silent server, a stalled handshake): the transport's own timeouts plus
 * an outer deadline that closes it. Error texts: "timeout after N ms", "authentication failed (535)", the SMTP code.
 */
export async function probeSmtp(
  s: SmtpSettings,
  net: Pick<ChannelNet, 'timeoutMs' | 'smtpTls'>,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const t0 = performance.now();
  const latency = (): number => Math.max(1, Math.round(performance.now() - t0));
  if (!s.smtpHost) return { ok: false, latencyMs: 0, message: 'SMTP is not configured (smtpHost)' };
  const nodemailer = await loadNodemailer();
  const transport = nodemailer.createTransport(smtpTransportOptions(s, net, false));
  let timer: NodeJS.Timeout | undefined;
  const onAbort = (): void => transport.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.race([
      transport.verify(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), net.timeoutMs);
      }),
    ]);
    return { ok: true, latencyMs: latency() };
  } catch (err) {
    const e = err as { code?: string };
    const message =
      e.code === 'ETIMEDOUT' || e.code === 'ETIMEOUT'
        ? `timeout after ${net.timeoutMs} ms`
        : smtpError(err).message.replace(/^email: /, '');
    return { ok: false, latencyMs: latency(), message };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    transport.close();
  }
}

export const emailChannel = defineChannel({
  id: 'email',
  displayName: 'Email (SMTP)',
  description: "Mail to each monitor's emailR recipients (emailOnF 'true') through the SMTP server of /setsmtpvault",
  docsUrl: 'https://nodemailer.com/smtp/',
  external: { via: 'POST /setsmtpvault', enabledField: 'smtpEnabled' },
  settings: {
    smtpHost: Type.String({ maxLength: 255, description: 'SMTP server host name' }),
    smtpPort: Type.String({ pattern: '^[0-9]{1,5}$', description: 'port (default 587)' }),
    smtpUser: Type.String({ maxLength: 255, description: 'user name for AUTH; empty = no AUTH' }),
    smtpPassword: Secret(Type.String({ maxLength: 1024, description: 'password (secret)' })),
    smtpFrom: Type.String({ maxLength: 320, description: 'From address' }),
    smtpEnabled: BoolString,
    smtpSecure: Type.Union(
      ['', 'tls', 'starttls', 'none', 'true', 'false'].map((v) => Type.Literal(v)),
      {
        description:
          'tls (implicit TLS), starttls (required STARTTLS), none; empty = TLS on 465, else STARTTLS if offered',
      },
    ),
  },
  requiredWhenEnabled: ['smtpHost', 'smtpFrom'],
  example: {
    smtpHost: 'smtp.example.com',
    smtpPort: '587',
    smtpUser: 'alerts',
    smtpPassword: 'app-password',
    smtpFrom: 'Sentinel <alerts@example.com>',
    smtpEnabled: 'true',
    smtpSecure: 'starttls',
  },
  endpoint: { kind: 'smtp', host: 'smtpHost', port: 'smtpPort' },
  // emailOnF and emailR are the spec's common monitor fields (common-fields.ts); email adds none of its own.
  monitorFields: {},
  route(m) {
    const recipients = (m.emailR ?? '')
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean);
    return m.emailOnF === 'true' && recipients.length > 0 ? { recipients } : undefined;
  },
  severity: {
    MINOR: 'subject [MINOR]',
    MAJOR: 'subject [MAJOR]',
    CRITICAL: 'subject [CRITICAL]',
    DOWN: 'subject [DOWN]',
    ERROR: 'subject [ERROR]',
    EXCEPTION: 'subject [EXCEPTION]',
    OK: 'subject [RECOVERED]',
    TEST: 'subject [TEST]',
  },
  async send(alert: Alert, s: ChannelSettingsValues, ctx: SendContext): Promise<void> {
    const to = (alert.recipients ?? []).filter((r) => r.trim() !== '');
    if (to.length === 0) throw new ChannelError('email: no recipients', false);
    if (!s.smtpHost) throw new ChannelError('email: SMTP is not configured', false);
    const msg = buildEmail(alert);
    const nodemailer = await loadNodemailer();
    const key = JSON.stringify([s.smtpHost, s.smtpPort, s.smtpUser, s.smtpPassword, s.smtpSecure]);
    const transport = ctx.pool.slot<Transporter>(
      'email',
      key,
      () => nodemailer.createTransport(smtpTransportOptions(s, ctx.net, true)),
      (t) => t.close(),
    );
    const onAbort = (): void => ctx.pool.drop('email');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      await transport.sendMail({ from: s.smtpFrom, to, subject: msg.subject, text: msg.text, html: msg.html });
    } catch (err) {
      if (ctx.signal.aborted) throw new ChannelError('email: aborted', true);
      throw smtpError(err);
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  },
  probeDescription: 'connects, negotiates TLS and logs in; sends no mail',
  probe: (s, ctx) => probeSmtp(s, ctx.net, ctx.signal),
});
