/**
 * Command lines as non-admins see them (docs/security.md §17): arguments that usually carry credentials are replaced
 * by `***`, the rest stays readable. Redacted: the value of any `name=value` whose name mentions a password, token,
 * secret, key, auth or credential (`--password=x`, `token=x`, `Password=x;` in a connection string, `?api_key=x` in a
 * URL); the argument after such a flag (`--password x`, `--client-secret x`); mysql's attached `-p<x>`; and URL
 * userinfo (`scheme://user:***@host`, `scheme://***@host` when there is no password). It errs on the side of hiding:
 * `--key-file /path` loses its path. The command line is the kernel's argv joined by spaces, so it is read as
 * space-separated words.
 */
const SENSITIVE = /pass|pwd|token|secret|key|auth|cred|cookie|session/i;
const NAME_VALUE = /([A-Za-z0-9_.-]*)=([^\s;&,]*)/g;
const USERINFO = /([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/\s@]*)@/g;
const MASK = '***';

function redactWord(word: string): string {
  let w = word.replace(USERINFO, (_m, scheme: string, info: string) => {
    const colon = info.indexOf(':');
    return `${scheme}${colon === -1 ? MASK : `${info.slice(0, colon)}:${MASK}`}@`;
  });
  w = w.replace(NAME_VALUE, (m, name: string, value: string) =>
    SENSITIVE.test(name) && value !== '' ? `${name}=${MASK}` : m,
  );
  if (/^-p[^-\s]/.test(w) && !w.includes('=')) w = `-p${MASK}`;
  return w;
}

/** A flag whose next word is its value: `--password`, `--client-secret`, `-token` (but not `--password=x`). */
function takesSecretValue(word: string): boolean {
  return /^--?[A-Za-z]/.test(word) && !word.includes('=') && SENSITIVE.test(word);
}

export function redactCommandLine(cmdline: string): string {
  const words = cmdline.split(' ');
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    out.push(redactWord(w));
    const next = words[i + 1];
    if (takesSecretValue(w) && next !== undefined && next !== '' && !next.startsWith('-')) {
      out.push(MASK);
      i++;
    }
  }
  return out.join(' ');
}
