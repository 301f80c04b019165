/** Helpers of the HTTP probe: failure classification, policy-checked DNS lookup, certificate facts. */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { PeerCertificate } from 'node:tls';
import type { NetworkPolicy } from '../types.js';
import { policyError } from './network-policy.js';
import { DAY_MS } from '../../../core/time.js';

export { policyError } from './network-policy.js';

export interface CertFacts {
  host: string;
  subject?: string;
  issuer?: string;
  validFromMs: number;
  validToMs: number;
  /** DNS names and addresses of the subjectAltName extension. */
  sans?: string[];
  /** `RSA 2048`, `EC prime256v1`, … */
  keyType?: string;
  /** SHA-256 fingerprint (AA:BB:…): the certificate inventory's key. */
  fingerprint256?: string;
  serialNumber?: string;
}

const DOWN_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EADDRNOTAVAIL',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
]);

const TLS_CODES =
  /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|HOSTNAME_MISMATCH$|ERR_OSSL)/;

/** Maps a request failure to an outcome. The signal's abort is the runner's timeout. */
export function classifyError(
  e: unknown,
  signal: AbortSignal,
  timeoutMs: number,
): { outcome: 'down' | 'error' | 'exception'; message: string; errorCode?: string } {
  if (signal.aborted) return { outcome: 'down', message: `timeout after ${timeoutMs} ms`, errorCode: 'ETIMEOUT' };
  const err = e as { code?: string; message?: string };
  const code = err?.code;
  const text = err?.message ?? String(e);
  if (code === 'EPOLICY') return { outcome: 'exception', message: text, errorCode: code };
  if (code !== undefined && DOWN_CODES.has(code)) return { outcome: 'down', message: text, errorCode: code };
  if (text === 'socket hang up') return { outcome: 'down', message: text, errorCode: code ?? 'ECONNRESET' };
  if (code !== undefined && TLS_CODES.test(code)) return { outcome: 'error', message: `TLS: ${text}`, errorCode: code };
  if (code !== undefined && code.startsWith('HPE_')) {
    return { outcome: 'error', message: `invalid HTTP response: ${text}`, errorCode: code };
  }
  return { outcome: 'error', message: text, errorCode: code };
}

/** A lookup that drops resolved addresses the policy denies; when none remain the connection fails with EPOLICY. */
export function policyLookup(policy: NetworkPolicy): LookupFunction {
  const lookup = (hostname: string, options: dns.LookupOptions, cb: (...args: any[]) => void): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return cb(err);
      const list = addresses;
      const allowed = list.filter((a) => policy.denies(a.address) === undefined);
      if (allowed.length === 0) {
        const reason = list.length > 0 ? policy.denies(list[0]!.address) : undefined;
        return cb(policyError(`${hostname}: ${reason ?? 'no address'}`));
      }
      if (options.all) cb(null, allowed);
      else cb(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
  return lookup;
}

export function certFacts(cert: PeerCertificate | undefined, host: string): CertFacts | undefined {
  if (!cert || !cert.valid_to) return undefined;
  const validToMs = Date.parse(cert.valid_to);
  if (!Number.isFinite(validToMs)) return undefined;
  return {
    host,
    subject: cert.subject?.CN ? String(cert.subject.CN) : undefined,
    issuer: cert.issuer?.CN ? String(cert.issuer.CN) : undefined,
    validFromMs: Date.parse(cert.valid_from),
    validToMs,
    sans: cert.subjectaltname
      ? cert.subjectaltname
          .split(', ')
          .map((s) => s.replace(/^(DNS|IP Address):/, ''))
          .slice(0, 100)
      : undefined,
    keyType: keyTypeOf(cert),
    fingerprint256: cert.fingerprint256 || undefined,
    serialNumber: cert.serialNumber || undefined,
  };
}

function keyTypeOf(cert: PeerCertificate): string | undefined {
  const c = cert as PeerCertificate & { nistCurve?: string; asn1Curve?: string; modulus?: string; bits?: number };
  if (c.modulus) return `RSA ${c.bits ?? ''}`.trim();
  if (c.nistCurve || c.asn1Curve) return `EC ${c.nistCurve ?? c.asn1Curve}`;
  return c.bits ? `${c.bits}-bit` : undefined;
}

/** Days until expiry (negative once expired) and the level: < 30 d MINOR, < 14 d MAJOR, < 7 d or expired CRITICAL. */
export function certLevel(
  validToMs: number,
  nowMs: number,
): { daysLeft: number; severity?: 'MINOR' | 'MAJOR' | 'CRITICAL' } {
  const days = (validToMs - nowMs) / DAY_MS;
  const daysLeft = Math.floor(days * 10) / 10;
  if (days < 7) return { daysLeft, severity: 'CRITICAL' };
  if (days < 14) return { daysLeft, severity: 'MAJOR' };
  if (days < 30) return { daysLeft, severity: 'MINOR' };
  return { daysLeft };
}
