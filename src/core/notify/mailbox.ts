/**
 * Email addresses and mailboxes as the settings and monitor fields accept them: an address is `local@domain`
 * (dot-atom local part of at most 64 characters; a domain of letter/digit/hyphen labels, or an IP literal in
 * brackets; 254 characters in all), a mailbox is an address or `Display Name <address>` (the name optionally in
 * double quotes, no line breaks). Used for smtpFrom and emailR, so a typo is a 400 at once, not a failed delivery later.
 */

const LOCAL_RE = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL_RE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const IP_LITERAL_RE = /^\[(?:\d{1,3}(?:\.\d{1,3}){3}|IPv6:[0-9A-Fa-f:.]+)\]$/;

export function isEmailAddress(value: string): boolean {
  if (typeof value !== 'string' || value.length > 254) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > 64 || !LOCAL_RE.test(local)) return false;
  if (IP_LITERAL_RE.test(domain)) return true;
  const labels = domain.replace(/\.$/, '').split('.');
  return labels.every((l) => LABEL_RE.test(l));
}

export interface Mailbox {
  name?: string;
  address: string;
}

/** Parses `address`, `Name <address>` or `"Name, Inc." <address>`; undefined when it is none of these. */
export function parseMailbox(value: string): Mailbox | undefined {
  if (typeof value !== 'string' || value.length > 320 || /[\r\n\0]/.test(value)) return undefined;
  const v = value.trim();
  if (isEmailAddress(v)) return { address: v };
  const m = /^(.*?)\s*<([^<>\s]+)>$/.exec(v);
  if (!m || !isEmailAddress(m[2]!)) return undefined;
  let name = m[1]!.trim();
  if (name.startsWith('"')) {
    if (!/^"(?:[^"\\]|\\.)*"$/.test(name)) return undefined;
    name = name.slice(1, -1).replace(/\\(.)/g, '$1');
  } else if (/[<>"@,;:]/.test(name)) return undefined;
  return name === '' ? { address: m[2]! } : { name, address: m[2]! };
}
