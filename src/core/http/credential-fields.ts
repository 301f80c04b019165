/**
 * How credentials sit inside plain fields, shared by the monitor service (which seals and masks them,
 * monitor-types/lib/credentials.ts, and never sends them to another origin, lib/http-redirect.ts) and the `sentinel`
 * CLI (which masks a file's values the same way to compare them, src/cli/embedded.ts): which header names carry
 * credentials, and the api type's "Key:Value,Key:Value" header list.
 */

/** The mask shown in place of a credential. */
export const REDACTED = '***';

/** Credentials and credential-like header names: Authorization, Proxy-Authorization, Cookie, and any name containing
 * auth, token, secret, key, session, password or credential. */
export function isSensitiveHeader(name: string): boolean {
  const n = name.toLowerCase();
  return (
    n === 'authorization' ||
    n === 'proxy-authorization' ||
    n === 'cookie' ||
    /(auth|token|secret|key|session|password|credential)/.test(n)
  );
}

/** "Key:Value,Key:Value" → entries (a part without a colon is a name with an empty value). */
export function headerEntries(value: string): Array<[string, string]> {
  return value
    .split(',')
    .filter((p) => p.trim() !== '')
    .map((p) => {
      const colon = p.indexOf(':');
      return colon <= 0 ? [p, ''] : [p.slice(0, colon).trim(), p.slice(colon + 1).trim()];
    });
}

/** Entries → "Key:Value,Key:Value". */
export function joinHeaders(list: Array<[string, string]>): string {
  return list.map(([k, v]) => (v === '' && !k.includes(':') ? k : `${k}:${v}`)).join(',');
}
