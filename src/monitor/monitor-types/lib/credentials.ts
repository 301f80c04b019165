/**
 * Credentials inside plain fields (docs/security.md §7, review F8): the password of URL userinfo
 * (`https://user:pass@host/`) and the values of sensitive request headers (`Authorization`, `Proxy-Authorization`,
 * `Cookie` and any name containing auth, token, secret, key, session, password or credential: the names the probe
 * never sends to another origin, http-redirect.ts). A field holding one
 * is sealed whole at rest and shown with each credential replaced by `***`; sending `***` back in an update keeps the
 * stored credential (monitors.service.ts, bound to the target like every secret).
 */
import type { EmbeddedSecret } from '../types.js';
import { REDACTED, headerEntries, isSensitiveHeader, joinHeaders } from '../../../core/http/credential-fields.js';

export { REDACTED };

function parseUrl(value: string): URL | undefined {
  try {
    return new URL(value.trim());
  } catch {
    return undefined;
  }
}

/** The userinfo password of an http(s) URL. */
export const urlUserinfo: EmbeddedSecret = {
  has: (value) => (parseUrl(value)?.password ?? '') !== '',
  redact(value) {
    const u = parseUrl(value);
    if (!u || u.password === '') return value;
    u.password = REDACTED;
    return u.href;
  },
  restore(value, stored) {
    const u = parseUrl(value);
    const old = parseUrl(stored);
    if (!u || !old || decodeURIComponent(u.password) !== REDACTED || old.password === '') return { value, kept: false };
    u.password = old.password;
    return { value: u.href, kept: true };
  },
};

/** The values of sensitive headers. */
export const headerValues: EmbeddedSecret = {
  has: (value) => headerEntries(value).some(([k, v]) => v !== '' && isSensitiveHeader(k)),
  redact: (value) =>
    joinHeaders(headerEntries(value).map(([k, v]) => [k, v !== '' && isSensitiveHeader(k) ? REDACTED : v])),
  restore(value, stored) {
    const old = new Map(headerEntries(stored).map(([k, v]) => [k.toLowerCase(), v]));
    let kept = false;
    const out = headerEntries(value).map(([k, v]): [string, string] => {
      const prev = old.get(k.toLowerCase());
      if (v !== REDACTED || prev === undefined || prev === REDACTED) return [k, v];
      kept = true;
      return [k, prev];
    });
    return { value: kept ? joinHeaders(out) : value, kept };
  },
};
