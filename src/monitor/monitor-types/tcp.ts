/**
 * tcp: time to open a TCP connection to ip:port (hostnames and IPv6 literals work). Connected → up; refused, DNS
 * failure, unreachable or the runner's timeout → down. The connection is closed as soon as it is open — or, with a
 * `tls` mode, after the TLS handshake (implicit or STARTTLS), whose certificate sets the level by its expiry.
 * The network policy (lib/network-policy.ts) applies: the name is resolved first, every address checked, and the socket
 * connects to the checked address (a denied one is `exception`, before any packet is sent).
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Type } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import type { CheckContext, CheckResult, MonitorConfig, MonitorType } from './types.js';
import { isPolicyError, resolveChecked } from './lib/network-policy.js';
import { TLS_MODES, type TlsMode } from './lib/starttls.js';
import { tlsFacts } from './lib/tls-check.js';

const fields = Type.Object({
  ip: Type.String({ description: 'Host name, IPv4 or IPv6 address to connect to' }),
  port: Type.String({ description: 'TCP port (string number 1-65535)' }),
  tls: Type.String({
    enum: [...TLS_MODES],
    default: 'off',
    description:
      'off: a bare connect. tls: a TLS handshake once connected; smtp, imap, pop3, ldap, postgres, mysql: that ' +
      "protocol's STARTTLS upgrade, then the handshake. With TLS the certificate's expiry sets the level as for url " +
      '(< 30 d MINOR, < 14 d MAJOR, < 7 d or expired CRITICAL) and the certificate joins GET /certificates',
  }),
  ignoreTlsErrors: Type.String({
    enum: ['true', 'false'],
    description: 'true: an untrusted chain or a wrong name is not a failure (expiry still sets the level)',
  }),
});

function hostOf(ip: string): string {
  const h = ip.trim();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

function validate(c: MonitorConfig): void {
  const host = hostOf(c.ip ?? '');
  if (host === '' || /[\s/]/.test(host) || (host.includes(':') && net.isIP(host) === 0)) {
    throw AppError.badRequest('ip must be a host name or an IP address', 'ip');
  }
  const port = (c.port ?? '').trim();
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw AppError.badRequest('port must be an integer from 1 to 65535', 'port');
  }
  if (c.tls !== undefined && !(TLS_MODES as readonly string[]).includes(c.tls))
    throw AppError.badRequest(`tls must be one of ${TLS_MODES.join(', ')}`, 'tls');
}

interface TlsOptions {
  mode: TlsMode;
  ignoreTlsErrors: boolean;
  /** The name asked for (SNI and the certificate's expected name). */
  host: string;
}

/** Resolves and checks `host` against the policy, then connects to the checked address. */
async function checkTcp(host: string, port: number, ctx: CheckContext, tls: TlsOptions): Promise<CheckResult> {
  const t0 = performance.now();
  let target: Awaited<ReturnType<typeof resolveChecked>>;
  try {
    target = await resolveChecked(ctx.policy, host);
  } catch (e) {
    const err = e as Error & { code?: string };
    const ms = Math.round((performance.now() - t0) * 1000) / 1000;
    if (isPolicyError(e)) return { outcome: 'exception', responseTimeMs: ms, message: err.message };
    return { outcome: 'down', responseTimeMs: ms, message: err.message, details: { errorCode: err.code } };
  }
  return connectOnce(target.address, port, ctx, t0, target.dnsMs, tls);
}

function connectOnce(
  address: string,
  port: number,
  ctx: CheckContext,
  t0: number,
  dnsMs: number,
  tls: TlsOptions,
): Promise<CheckResult> {
  return new Promise((resolve) => {
    const ms = (): number => Math.round((performance.now() - t0) * 1000) / 1000;
    const socket = net.connect({ host: address, port });
    const done = (r: CheckResult): void => {
      ctx.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(r);
    };
    const onAbort = (): void =>
      done({ outcome: 'down', responseTimeMs: ms(), message: `timeout after ${ctx.timeoutMs} ms` });
    if (ctx.signal.aborted) return onAbort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      const connectMs = ms();
      const connected: CheckResult = {
        outcome: 'up',
        responseTimeMs: connectMs,
        message: `connected to ${socket.remoteAddress ?? address}:${port}`,
        metrics: { connectMs, dnsMs },
        details: { remoteAddress: socket.remoteAddress },
      };
      if (tls.mode === 'off') return done(connected);
      void tlsFacts(socket, tls.mode, tls.host, { ignoreTlsErrors: tls.ignoreTlsErrors, nowMs: ctx.now() }).then((r) =>
        done({ ...r, responseTimeMs: ms(), metrics: { ...connected.metrics, ...r.metrics } }),
      );
    });
    socket.once('error', (e: Error & { code?: string }) => {
      done({ outcome: 'down', responseTimeMs: ms(), message: e.message, details: { errorCode: e.code } });
    });
  });
}

export const tcpType: MonitorType = {
  id: 'tcp',
  fields,
  required: ['ip', 'port'],
  secretFields: [],
  validate,
  endpoint: (c) => ({ host: hostOf(c.ip ?? ''), port: Number((c.port ?? '').trim()) }),
  check(c: MonitorConfig, ctx: CheckContext): Promise<CheckResult> {
    const host = hostOf(c.ip ?? '');
    const tls = { mode: (c.tls ?? 'off') as TlsMode, ignoreTlsErrors: c.ignoreTlsErrors === 'true', host };
    return checkTcp(host, Number((c.port ?? '').trim()), ctx, tls);
  },
};
export default tcpType;
