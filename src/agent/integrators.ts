/**
 * POST /checkConnectIntegrators: tests every configured integrator and reports per integrator ok / error / latency.
 * Today the one integrator is SMTP: connect, STARTTLS when smtpTLS is true (implicit TLS on port 465), then AUTH when
 * a user name is set (nodemailer's verify()). Each test is bounded by `timeoutMs` whatever the server does (a silent
 * server, a stalled TLS handshake): the transport's own timeouts plus an outer deadline that closes it.
 */
import type nodemailerType from 'nodemailer';
import type { AgentSettings } from './settings.js';
import { toSmtpSettings } from './discovery/alerts.js';

export interface IntegratorResult {
  name: string;
  configured: boolean;
  ok: boolean;
  latencyMs: number;
  error?: string;
}

function describe(e: unknown, timeoutMs: number): string {
  const x = e as { code?: string; responseCode?: number; message?: string };
  if (x.code === 'ETIMEDOUT' || x.code === 'ETIMEOUT')
    return `timeout after ${timeoutMs} ms${x.message && x.message !== 'timed out' ? ` (${x.message.slice(0, 80)})` : ''}`;
  if (x.code === 'EAUTH') return `authentication failed${x.responseCode ? ` (${x.responseCode})` : ''}`;
  if (x.code) return `${x.code}${x.responseCode ? ` ${x.responseCode}` : ''}`;
  return (x.message ?? 'failed').slice(0, 160);
}

export async function checkSmtp(
  settings: AgentSettings,
  opts: { timeoutMs?: number; tls?: { ca?: string | Buffer; rejectUnauthorized?: boolean } } = {},
): Promise<IntegratorResult> {
  const c = settings.smtpWithSecret();
  if (!c.smtpServerName) return { name: 'smtp', configured: false, ok: false, latencyMs: 0, error: 'not configured' };
  const s = toSmtpSettings(c);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  // Loaded on use: an agent that never checks or sends email never loads nodemailer.
  const nodemailer = (await import('nodemailer')).default as typeof nodemailerType;
  const transport = nodemailer.createTransport({
    host: s.smtpHost,
    port: Number(s.smtpPort),
    secure: s.smtpSecure === 'tls',
    requireTLS: s.smtpSecure === 'starttls',
    ignoreTLS: s.smtpSecure === 'none',
    auth: s.smtpUser ? { user: s.smtpUser, pass: s.smtpPassword ?? '' } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    tls: opts.tls,
  } as Parameters<typeof nodemailerType.createTransport>[0]);
  const t0 = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      transport.verify(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })), timeoutMs);
      }),
    ]);
    return { name: 'smtp', configured: true, ok: true, latencyMs: Math.round(performance.now() - t0) };
  } catch (e) {
    return {
      name: 'smtp',
      configured: true,
      ok: false,
      latencyMs: Math.round(performance.now() - t0),
      error: describe(e, timeoutMs),
    };
  } finally {
    clearTimeout(timer);
    transport.close();
  }
}

export async function checkIntegrators(
  settings: AgentSettings,
  opts: Parameters<typeof checkSmtp>[1] = {},
): Promise<IntegratorResult[]> {
  return Promise.all([checkSmtp(settings, opts)]);
}
