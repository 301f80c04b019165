/**
 * Credentials embedded in plain fields — a URL's password (`https://user:pw@host/`) and the values of credential
 * headers in api `headers` ("Key:Value,Key:Value") — are shown by the service as `***` (docs/security.md §7). The CLI
 * never writes `***` into a file: export turns each into a `${SENTINEL_<NAME>_…}` reference, and apply compares a
 * file's value with the service's after masking it the same way (so an unchanged credential plans nothing). The
 * rules restate the service's (monitor-types/lib/credentials.ts, http-redirect.ts isSensitiveHeader) because the CLI
 * imports nothing from the services; test/cli/cli.test.ts checks both agree through the API.
 */
const MASK = '***';

export function isCredentialHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n === 'authorization' ||
    n === 'proxy-authorization' ||
    n === 'cookie' ||
    /(auth|token|secret|key|session|password|credential)/.test(n)
  );
}

function parseUrl(v: string): URL | undefined {
  try {
    return /^https?:\/\//i.test(v.trim()) ? new URL(v.trim()) : undefined;
  } catch {
    return undefined;
  }
}

function entries(value: string): Array<[string, string]> {
  return value
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((p) => {
      const colon = p.indexOf(':');
      return colon <= 0 ? [p, ''] : [p.slice(0, colon).trim(), p.slice(colon + 1).trim()];
    });
}

const join = (list: Array<[string, string]>) =>
  list.map(([k, v]) => (v === '' && !k.includes(':') ? k : `${k}:${v}`)).join(',');

/** The value as the service shows it: URL password and credential header values replaced by `***`. */
export function maskEmbedded(field: string, v: string): string {
  const u = parseUrl(v);
  if (u) {
    if (u.password === '') return v;
    u.password = MASK;
    return u.href;
  }
  if (field === 'headers') return join(entries(v).map(([k, x]) => [k, x !== '' && isCredentialHeader(k) ? MASK : x]));
  return v;
}

/** For export: each `***` the service shows becomes a reference `${<prefix>_PASSWORD}` / `${<prefix>_<HEADER>}`. */
export function referenceEmbedded(field: string, v: string, prefix: string): string {
  const ref = (what: string) => `\${${`${prefix}_${what}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}}`;
  const u = parseUrl(v);
  if (u) return decodeURIComponent(u.password) === MASK ? v.replace(`:${u.password}@`, `:${ref('PASSWORD')}@`) : v;
  if (field === 'headers') return join(entries(v).map(([k, x]) => [k, x === MASK ? ref(k) : x]));
  return v;
}
