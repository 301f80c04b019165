/**
 * Credentials embedded in plain fields — a URL's password (`https://user:pw@host/`) and the values of credential
 * headers in api `headers` ("Key:Value,Key:Value") — are shown by the service as `***` (docs/security.md §7). The CLI
 * never writes `***` into a file: export turns each into a `${SENTINEL_<NAME>_…}` reference, and apply compares a
 * file's value with the service's after masking it the same way (so an unchanged credential plans nothing). The
 * header rules are core's (core/http/credential-fields.ts), the same the service applies; test/cli/cli.test.ts checks
 * both agree through the API.
 */
import { REDACTED, headerEntries, isSensitiveHeader, joinHeaders } from '../core/http/credential-fields.js';

function parseUrl(v: string): URL | undefined {
  try {
    return /^https?:\/\//i.test(v.trim()) ? new URL(v.trim()) : undefined;
  } catch {
    return undefined;
  }
}

/** The value as the service shows it: URL password and credential header values replaced by `***`. */
export function maskEmbedded(field: string, v: string): string {
  const u = parseUrl(v);
  if (u) {
    if (u.password === '') return v;
    u.password = REDACTED;
    return u.href;
  }
  if (field === 'headers')
    return joinHeaders(headerEntries(v).map(([k, x]) => [k, x !== '' && isSensitiveHeader(k) ? REDACTED : x]));
  return v;
}

/** For export: each `***` the service shows becomes a reference `${<prefix>_PASSWORD}` / `${<prefix>_<HEADER>}`. */
export function referenceEmbedded(field: string, v: string, prefix: string): string {
  const ref = (what: string) => `\${${`${prefix}_${what}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}}`;
  const u = parseUrl(v);
  if (u) return decodeURIComponent(u.password) === REDACTED ? v.replace(`:${u.password}@`, `:${ref('PASSWORD')}@`) : v;
  if (field === 'headers') return joinHeaders(headerEntries(v).map(([k, x]) => [k, x === REDACTED ? ref(k) : x]));
  return v;
}
