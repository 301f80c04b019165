/**
 * Scopes of named secrets, TOTP seeds and Vault path prefixes (docs/security.md §1, review F1). An admin says which
 * monitors may use a reference (by name or by tag) and on which origins its value may be typed (the page an exec
 * `fill`/`select`/`totp` step types into). A reference without a scope (every secret stored before scopes existed,
 * and Vault paths under no prefix scope) is usable only by monitors an admin saved last. `vaultToken` is the Vault
 * client's own credential and never resolves in a template.
 */
import { AppError } from '../../core/errors.js';

export interface SecretScope {
  /** Monitor names that may use the reference. */
  monitors: string[];
  /** Monitor tags: a monitor carrying any of them may use the reference. */
  tags: string[];
  /** Origins (scheme://host[:port]) whose pages the value may be typed into. */
  origins: string[];
}

export type RefKind = 'secret' | 'totp' | 'vault';

/** One use of a reference by a monitor: where it is typed (undefined: unknown). */
export interface SecretUse {
  kind: RefKind;
  /** secret/totp: the secret's name; vault: mount/path#key. */
  ref: string;
  origin: string | undefined;
}

export const RESERVED_SECRETS: readonly string[] = ['vaultToken'];

const NAME_RE = /^[A-Za-z0-9_.:@ -]{1,128}$/;

function list(value: unknown, field: string, check: (s: string) => string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > 200)
    throw AppError.badRequest(`${field} must be an array of at most 200 strings`, field);
  return value.map((v) => {
    if (typeof v !== 'string') throw AppError.badRequest(`${field} must hold strings`, field);
    return check(v.trim());
  });
}

/** An origin as `new URL().origin` writes it (http(s) only, no path, no userinfo); 400 naming the field otherwise. */
export function parseOrigin(raw: string, field: string): string {
  let u: URL | undefined;
  try {
    u = new URL(raw);
  } catch {
    u = undefined;
  }
  const web = u !== undefined && (u.protocol === 'http:' || u.protocol === 'https:');
  if (!u || !web || u.username || u.password || u.pathname !== '/' || u.search || u.hash)
    throw AppError.badRequest(
      `${field}: "${raw.slice(0, 100)}" is not an origin like https://login.example.com:8443`,
      field,
    );
  return u.origin;
}

/** Validates a scope from a request body (`at`: where it sits, e.g. "body"). */
export function parseScope(body: Record<string, unknown>, at: string): SecretScope {
  const name = (f: string) => (s: string) => {
    if (!NAME_RE.test(s)) throw AppError.badRequest(`${f}: "${s.slice(0, 64)}" is not a monitor name or tag`, f);
    return s;
  };
  const scope = {
    monitors: list(body.monitors, `${at}.monitors`, name(`${at}.monitors`)),
    tags: list(body.tags, `${at}.tags`, name(`${at}.tags`)),
    origins: list(body.origins, `${at}.origins`, (s) => parseOrigin(s, `${at}.origins`)),
  };
  if (scope.origins.length === 0)
    throw AppError.badRequest('a scope needs at least one origin the value may be typed on', `${at}.origins`);
  if (scope.monitors.length + scope.tags.length === 0)
    throw AppError.badRequest('a scope needs at least one monitor name or tag', `${at}.monitors`);
  return scope;
}

export function refLabel(use: Pick<SecretUse, 'kind' | 'ref'>): string {
  return `{{${use.kind}:${use.ref}}}`;
}

/**
 * Why `monitor` may not use `use` under `scope` (undefined: it may). `trusted`: the monitor's author is an admin, who
 * may use unscoped references.
 */
export function scopeRefusal(
  scope: SecretScope | undefined,
  use: SecretUse,
  monitor: { name: string; tags: readonly string[] },
  trusted: boolean,
): string | undefined {
  const label = refLabel(use);
  if (use.kind !== 'vault' && RESERVED_SECRETS.includes(use.ref))
    return `${label}: ${use.ref} is the Vault client's credential and never resolves in a template`;
  if (!scope)
    return trusted
      ? undefined
      : `${label} has no scope: only an admin's monitors may use it until an admin sets one (docs/security.md §1)`;
  const member = scope.monitors.includes(monitor.name) || monitor.tags.some((t) => scope.tags.includes(t));
  if (!member) return `${label} is not in scope for monitor ${monitor.name} (its scope names other monitors and tags)`;
  if (use.origin === undefined || !scope.origins.includes(use.origin))
    return `${label} may not be typed on ${use.origin ?? 'a page of unknown origin'} (its scope allows ${scope.origins.join(', ')})`;
  return undefined;
}
