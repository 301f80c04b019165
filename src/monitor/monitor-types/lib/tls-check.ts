/**
 * The facts of a TLS check on a connected socket (tcp with a `tls` mode): upgrade, take the peer certificate, judge
 * its expiry with url's levels (certLevel) and its chain. An expired certificate is CRITICAL (not a failure: the
 * service answers); an untrusted chain or wrong name is `error` unless ignoreTlsErrors; a refused STARTTLS or a failed
 * handshake is `error` with the reason.
 */
import type net from 'node:net';
import type { CheckResult } from '../types.js';
import { certFacts, certLevel } from './http-probe-support.js';
import { upgradeToTls, type TlsMode } from './starttls.js';

export async function tlsFacts(
  socket: net.Socket,
  mode: Exclude<TlsMode, 'off'>,
  host: string,
  o: { ignoreTlsErrors: boolean; nowMs: number },
): Promise<Omit<CheckResult, 'responseTimeMs'>> {
  const t0 = performance.now();
  let up;
  try {
    up = await upgradeToTls(socket, mode, host);
  } catch (e) {
    return { outcome: 'error', message: `TLS (${mode}): ${(e as Error).message}`, details: { tlsMode: mode } };
  }
  const tlsMs = Math.round((performance.now() - t0) * 1000) / 1000;
  up.socket.destroy();
  const cert = certFacts(up.cert, host);
  if (!cert) return { outcome: 'error', message: `TLS (${mode}): no certificate`, metrics: { tlsMs } };
  const level = certLevel(cert.validToMs, o.nowMs);
  const details = { tlsMode: mode, protocol: up.protocol, cert, authorizationError: up.authorizationError };
  const metrics = { tlsMs, certDaysLeft: level.daysLeft };
  const expired = up.authorizationError === 'CERT_HAS_EXPIRED';
  if (up.authorizationError && !expired && !o.ignoreTlsErrors)
    return { outcome: 'error', message: `TLS (${mode}): ${up.authorizationError}`, metrics, details };
  const days = `certificate ${cert.subject ?? host} expires in ${level.daysLeft} days`;
  return {
    outcome: 'up',
    severity: level.severity,
    message: `TLS (${mode}, ${up.protocol ?? '?'}): ${expired ? 'certificate expired' : days}`,
    metrics,
    details,
  };
}
