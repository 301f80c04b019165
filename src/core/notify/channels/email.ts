/**
 * Email through nodemailer with the SMTP settings of POST /setsmtpvault (smtpHost, smtpPort, smtpUser, smtpPassword,
 * smtpFrom, smtpEnabled) plus the optional `smtpSecure`: 'tls' (implicit TLS, usually port 465), 'starttls'
 * (STARTTLS required), 'none' (plain, no STARTTLS), empty = implicit TLS on port 465 else STARTTLS when offered.
 * Recipients come from the alert (the monitor's emailR when emailOnF is 'true'). Text and HTML bodies.
 *
 * SMTP reply 4xx and connection/timeouts are retryable; 5xx replies and authentication failures are not.
 */
import { Type } from '@sinclair/typebox';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Alert, SendContext } from '../channel.js';
import { ChannelError } from '../channel.js';
import { alertFacts, alertTitle } from '../alert-text.js';
import { type ChannelDefinition, BoolString, DEFAULT_SEND_TIMEOUT_MS } from '../channel-kit.js';

export interface SmtpSettings {
  smtpHost?: string;
  smtpPort?: string;
  smtpUser?: string;
  smtpPassword?: string;
  smtpFrom?: string;
  smtpEnabled?: string;
  smtpSecure?: string;
}

export interface EmailChannelDeps {
  /** Extra TLS options (a test CA). */
  tls?: { ca?: string | Buffer; rejectUnauthorized?: boolean };
  timeoutMs?: number;
}

export interface EmailMessage {
  subject: string;
  text: string;
  html: string;
}

function escHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
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
  const rows = facts.map(([k, v]) => `<tr><th align="left">${escHtml(k)}</th><td>${escHtml(v)}</td></tr>`).join('');
  const html =
    `<!doctype html><html><body><h2>${escHtml(subject)}</h2><table>${rows}</table>` +
    (alert.message ? `<pre>${escHtml(alert.message)}</pre>` : '') +
    '<p style="color:#888">Sentinel monitoring</p></body></html>';
  return { subject, text, html };
}

function transportOptions(s: SmtpSettings, deps: EmailChannelDeps): Record<string, unknown> {
  const port = Number(s.smtpPort || 587);
  const mode = (s.smtpSecure ?? '').toLowerCase();
  const timeoutMs = deps.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  return {
    host: s.smtpHost,
    port,
    secure: mode === 'tls' || mode === 'true' || (mode === '' && port === 465),
    requireTLS: mode === 'starttls',
    ignoreTLS: mode === 'none',
    auth: s.smtpUser ? { user: s.smtpUser, pass: s.smtpPassword ?? '' } : undefined,
    pool: true,
    maxConnections: 3,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    tls: deps.tls,
  };
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
  return new ChannelError(`email: ${e.code ?? 'send failed'}`, true);
}

export function createEmailChannel(deps: EmailChannelDeps = {}): ChannelDefinition<SmtpSettings> {
  let cached: { key: string; transport: Transporter } | undefined;
  const transportFor = (s: SmtpSettings): Transporter => {
    const key = JSON.stringify([s.smtpHost, s.smtpPort, s.smtpUser, s.smtpPassword, s.smtpSecure]);
    if (cached?.key === key) return cached.transport;
    cached?.transport.close();
    cached = { key, transport: nodemailer.createTransport(transportOptions(s, deps) as any) };
    return cached.transport;
  };
  return {
    id: 'email',
    settings: Type.Object({
      smtpHost: Type.Optional(Type.String()),
      smtpPort: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
      smtpUser: Type.Optional(Type.String()),
      smtpPassword: Type.Optional(Type.String()),
      smtpFrom: Type.Optional(Type.String()),
      smtpEnabled: Type.Optional(BoolString),
      smtpSecure: Type.Optional(
        Type.Union(['', 'tls', 'starttls', 'none', 'true', 'false'].map((v) => Type.Literal(v))),
      ),
    }),
    secretFields: ['smtpPassword'],
    requiredWhenEnabled: ['smtpHost', 'smtpFrom'],
    async send(alert: Alert, s: SmtpSettings, ctx: SendContext): Promise<void> {
      const to = (alert.recipients ?? []).filter((r) => r.trim() !== '');
      if (to.length === 0) throw new ChannelError('email: no recipients', false);
      if (!s.smtpHost) throw new ChannelError('email: SMTP is not configured', false);
      const msg = buildEmail(alert);
      const transport = transportFor(s);
      const onAbort = (): void => transport.close();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      try {
        await transport.sendMail({ from: s.smtpFrom, to, subject: msg.subject, text: msg.text, html: msg.html });
      } catch (err) {
        if (ctx.signal.aborted) {
          cached = undefined;
          throw new ChannelError('email: aborted', true);
        }
        throw smtpError(err);
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    },
    async close(): Promise<void> {
      cached?.transport.close();
      cached = undefined;
    },
  };
}
