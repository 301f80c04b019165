/**
 * POST /checkConnectIntegrators: tests every configured integrator and reports per integrator ok / error / latency.
 * Today the one integrator is SMTP, checked by the email channel's probe (core/notify/channels/email.ts: connect,
 * STARTTLS when smtpTLS is true (implicit TLS on port 465), AUTH when a user name is set; bounded by `timeoutMs`
 * whatever the server does). The SMTP transport mapping is the email channel's, the one of the whole project.
 */
import type { AgentSettings } from './settings.js';
import { toSmtpSettings } from './discovery/alerts.js';

export interface IntegratorResult {
  name: string;
  configured: boolean;
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export async function checkSmtp(
  settings: AgentSettings,
  opts: { timeoutMs?: number; tls?: { ca?: string | Buffer; rejectUnauthorized?: boolean } } = {},
): Promise<IntegratorResult> {
  const c = settings.smtpWithSecret();
  if (!c.smtpServerName) return { name: 'smtp', configured: false, ok: false, latencyMs: 0, error: 'not configured' };
  // Loaded on use: an agent that never checks or sends email never loads nodemailer.
  const { probeSmtp } = await import('../core/notify/channels/email.js');
  const r = await probeSmtp(toSmtpSettings(c), { timeoutMs: opts.timeoutMs ?? 10_000, smtpTls: opts.tls });
  return { name: 'smtp', configured: true, ok: r.ok, latencyMs: r.latencyMs, ...(r.ok ? {} : { error: r.message }) };
}
export async function checkIntegrators(
  settings: AgentSettings,
  opts: Parameters<typeof checkSmtp>[1] = {},
): Promise<IntegratorResult[]> {
  return Promise.all([checkSmtp(settings, opts)]);
}
