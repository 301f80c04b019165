/**
 * What a HAR keeps of the monitored application's sessions: nothing. `Cookie`, `Set-Cookie`, `Authorization`,
 * `Proxy-Authorization` and every header the `harRedactHeaders` setting names get the value "[redacted]" (the name
 * stays, so a reader still sees that one was sent), and the `cookies` arrays of requests and responses are emptied.
 * HARs are downloadable by `readonly` (docs/security.md §16).
 */

/** Headers always redacted, lower case. */
export const HAR_ALWAYS_REDACTED = ['cookie', 'set-cookie', 'authorization', 'proxy-authorization'] as const;
export const REDACTED = '[redacted]';

interface HarHeader {
  name?: unknown;
  value?: unknown;
}
interface HarMessage {
  headers?: HarHeader[];
  cookies?: unknown[];
}

/** The setting's comma-separated header names, lower-cased, plus the ones always redacted. */
export function redactedHeaderSet(setting: string | undefined): Set<string> {
  const extra = (setting ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  return new Set<string>([...HAR_ALWAYS_REDACTED, ...extra]);
}

function scrubMessage(m: HarMessage | undefined, names: Set<string>): void {
  if (!m || typeof m !== 'object') return;
  if (Array.isArray(m.cookies)) m.cookies = [];
  if (!Array.isArray(m.headers)) return;
  for (const h of m.headers) {
    if (h && typeof h.name === 'string' && names.has(h.name.toLowerCase())) h.value = REDACTED;
  }
}

/**
 * Returns the HAR text with the session headers and cookies removed, or undefined when the text is not a HAR (then the
 * caller deletes the file rather than keep something it could not scrub).
 */
export function scrubHarText(text: string, names: Set<string>): string | undefined {
  let har: { log?: { entries?: { request?: HarMessage; response?: HarMessage }[] } };
  try {
    har = JSON.parse(text) as typeof har;
  } catch {
    return undefined;
  }
  const entries = har?.log?.entries;
  if (!Array.isArray(entries)) return undefined;
  for (const e of entries) {
    scrubMessage(e?.request, names);
    scrubMessage(e?.response, names);
  }
  return JSON.stringify(har);
}
