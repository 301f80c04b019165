/**
 * What the url and api types share: field validation (URL, booleans, headers), the mapping of a probe result to
 * CheckResult facts (timings, status code, redirects, certificate days left and level) and the first step of their
 * verdict (judgeAnswer: a failed probe or an HTTP status ≥ 400 decides it).
 */
import { AppError } from '../../../core/errors.js';
import type { CheckResult, Severity } from '../types.js';
import { certLevel } from './http-probe-support.js';
import type { ProbeResult } from './http-probe.js';

/** A config value that is set (the UI may send empty strings for unset fields). */
export function present(v: string | undefined): v is string {
  return v !== undefined && v.trim() !== '';
}

/** Throws 400 unless `value` is an absolute http(s) URL with a host. */
export function validateHttpUrl(value: string | undefined, field: string): void {
  if (!present(value)) throw AppError.badRequest(`${field} is required`, field);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw AppError.badRequest(`${field} is not a valid URL`, field);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw AppError.badRequest(`${field} must use http or https (got '${url.protocol.replace(':', '')}')`, field);
  }
  if (url.hostname === '') throw AppError.badRequest(`${field} has no host`, field);
}

/** "true"/"false" (absent → false); throws 400 otherwise. */
/** The origin (scheme://host:port, default ports omitted, no userinfo) a URL's stored secrets are bound to; the text
 * itself when it is not a URL. */
export function httpOrigin(value: string | undefined): string {
  const v = (value ?? '').trim();
  try {
    return new URL(v).origin;
  } catch {
    return v;
  }
}

/** Host and port (the scheme's default when absent) of an http(s) URL; undefined when it is not one (or sealed). */
export function httpEndpoint(value: string | undefined): { host: string; port: number } | undefined {
  try {
    const u = new URL((value ?? '').trim());
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return { host: u.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return undefined;
  }
}

export function parseBool(value: string | undefined, field: string): boolean {
  if (!present(value)) return false;
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw AppError.badRequest(`${field} must be "true" or "false"`, field);
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Parses "Key:Value,Key:Value" (value = everything after the first colon, trimmed). Throws 400 naming `headers`. */
export function parseHeaders(value: string | undefined, field = 'headers'): Record<string, string> {
  const out: Record<string, string> = {};
  if (!present(value)) return out;
  for (const part of value.split(',')) {
    if (part.trim() === '') continue;
    const colon = part.indexOf(':');
    if (colon <= 0)
      throw AppError.badRequest(
        `${field} must be "Key:Value,Key:Value" (bad entry '${part.trim().slice(0, 40)}')`,
        field,
      );
    const key = part.slice(0, colon).trim();
    const val = part.slice(colon + 1).trim();
    if (!TOKEN.test(key))
      throw AppError.badRequest(`${field}: '${key.slice(0, 40)}' is not a valid header name`, field);
    if (/[\r\n\0]/.test(val))
      throw AppError.badRequest(`${field}: the value of '${key}' contains a control character`, field);
    out[key] = val;
  }
  return out;
}

/** The worse of two levels (undefined = none). */
export function worst(a: Severity | undefined, b: Severity | undefined): Severity | undefined {
  const rank = { MINOR: 1, MAJOR: 2, CRITICAL: 3 } as const;
  if (a === undefined) return b;
  if (b === undefined) return a;
  return rank[a] >= rank[b] ? a : b;
}

/**
 * The facts every probe yields: timings, redirects, certificate days left (the soonest-expiring certificate of the
 * HTTPS hops) with its level. A failed certificate verification because of expiry is CRITICAL.
 */
function probeFacts(
  p: ProbeResult,
  nowMs: number,
  isHttps: boolean,
): Required<Pick<CheckResult, 'metrics' | 'details'>> & { severity?: Severity } {
  const { dnsMs, connectMs, tlsMs, ttfbMs, totalMs } = p.timings;
  const metrics: Record<string, number> = { dnsMs, connectMs, ttfbMs, totalMs, redirectCount: p.redirects.length };
  if (isHttps || tlsMs > 0) metrics.tlsMs = tlsMs;
  const details: Record<string, unknown> = { finalUrl: p.finalUrl, redirects: p.redirects };
  let severity: Severity | undefined;
  if (p.certs.length > 0) {
    const soonest = p.certs.reduce((a, b) => (b.validToMs < a.validToMs ? b : a));
    const level = certLevel(soonest.validToMs, nowMs);
    metrics.certDaysLeft = level.daysLeft;
    severity = level.severity;
    details.cert = { ...soonest };
  }
  if (p.ok) {
    metrics.statusCode = p.statusCode;
    metrics.bodyBytes = p.bodyBytes;
    if (p.bodyTruncated) details.bodyTruncated = true;
  } else {
    if (p.errorCode) details.errorCode = p.errorCode;
    if (p.errorCode === 'CERT_HAS_EXPIRED') severity = worst(severity, 'CRITICAL');
  }
  return { metrics, details, severity };
}

/** A failed probe as a CheckResult. */
function probeFailure(p: ProbeResult & { ok: false }, nowMs: number, isHttps: boolean): CheckResult {
  const facts = probeFacts(p, nowMs, isHttps);
  return { outcome: p.outcome, responseTimeMs: p.timings.totalMs, message: p.message, ...facts };
}

/** The facts of an HTTP answer, for a type's own judgement (pattern, body) to build on. */
export type AnswerBase = { responseTimeMs: number } & ReturnType<typeof probeFacts>;

/**
 * The first step of every url/api verdict, one rule for both: a failed probe is its failure; an answer with HTTP
 * status ≥ 400 is ERROR; otherwise the answer and its facts.
 */
export function judgeAnswer(
  p: ProbeResult,
  nowMs: number,
  isHttps: boolean,
): { result: CheckResult } | { result?: undefined; answer: ProbeResult & { ok: true }; base: AnswerBase } {
  if (!p.ok) return { result: probeFailure(p, nowMs, isHttps) };
  const base: AnswerBase = { responseTimeMs: p.timings.totalMs, ...probeFacts(p, nowMs, isHttps) };
  if (p.statusCode >= 400) return { result: { ...base, outcome: 'error', message: `HTTP ${p.statusCode}` } };
  return { answer: p, base };
}
