/**
 * Secret references inside step values, resolved at run time (never stored resolved, never reported):
 *   {{vault:<mount>/<path>#<key>}}  HashiCorp Vault KV v2 (vault-client.ts)
 *   {{secret:<name>}}                the service's own secret store (ctx.secrets)
 *   {{totp:<name>}}                  the current RFC 6238 code from the seed stored as secret <name>
 * Every resolved value is registered with a SecretMasker, which scrubs messages, extracted values and the HAR.
 */
export const TEMPLATE_KINDS = ['vault', 'secret', 'totp'] as const;

export interface TemplateRef {
  raw: string;
  kind: string;
  ref: string;
  valid: boolean;
}

const TEMPLATE_RE = /\{\{\s*([A-Za-z]+)\s*:\s*([^}]*?)\s*\}\}/g;

function isValid(kind: string, ref: string): boolean {
  if (!(TEMPLATE_KINDS as readonly string[]).includes(kind) || ref === '') return false;
  if (kind !== 'vault') return /^[\w.-]+$/.test(ref);
  const hash = ref.lastIndexOf('#');
  if (hash <= 0 || hash === ref.length - 1) return false;
  const path = ref.slice(0, hash);
  return path.includes('/') && !path.split('/').some((seg) => seg === '' || seg === '.' || seg === '..');
}

export function findTemplates(text: string): TemplateRef[] {
  const out: TemplateRef[] = [];
  for (const m of text.matchAll(TEMPLATE_RE)) {
    // Both groups are not optional: a match always has them.
    out.push({ raw: m[0], kind: m[1]!, ref: m[2]!, valid: isValid(m[1]!, m[2]!) });
  }
  if (out.length === 0 && text.includes('{{')) out.push({ raw: text, kind: '', ref: '', valid: false });
  return out;
}

/** A run-time configuration fault (missing secret, vault unreachable): the check's outcome becomes 'exception'. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** Each source is told the origin of the page the value is about to be typed on (undefined: unknown), so that it
 * can enforce the reference's scope. */
export interface TemplateSources {
  secret(name: string, origin: string | undefined): Promise<string | undefined>;
  vault(path: string, key: string, origin: string | undefined): Promise<string>;
  totp(name: string, origin: string | undefined): Promise<string>;
}

export class SecretMasker {
  private readonly values = new Set<string>();

  add(value: string): void {
    if (value.length < 3) return;
    this.values.add(value);
    this.values.add(encodeURIComponent(value));
    this.values.add(JSON.stringify(value).slice(1, -1));
    this.values.add(new URLSearchParams({ v: value }).toString().slice(2));
  }

  get size(): number {
    return this.values.size;
  }

  /** A JSON-serialisable value with every registered value masked in every string inside it (a whole run result:
   * messages, step errors, navigation URLs, extracted values). */
  maskDeep<T>(value: T): T {
    if (this.values.size === 0) return value;
    if (typeof value === 'string') return this.mask(value) as T;
    if (Array.isArray(value)) return value.map((v: unknown) => this.maskDeep(v)) as T;
    if (value && typeof value === 'object')
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [this.mask(k), this.maskDeep(v as unknown)]),
      ) as T;
    return value;
  }

  mask(text: string): string;
  mask(text: string | undefined): string | undefined;
  mask(text: string | undefined): string | undefined {
    if (text === undefined || this.values.size === 0) return text;
    let out = text;
    const sorted = [...this.values].sort((a, b) => b.length - a.length);
    for (const v of sorted) out = out.split(v).join('***');
    return out;
  }
}

async function resolveOne(kind: string, ref: string, sources: TemplateSources, origin?: string): Promise<string> {
  if (kind === 'secret') {
    const v = await sources.secret(ref, origin);
    if (v === undefined) throw new TemplateError(`secret "${ref}" is not in the secret store`);
    return v;
  }
  if (kind === 'totp') return sources.totp(ref, origin);
  const hash = ref.lastIndexOf('#');
  return sources.vault(ref.slice(0, hash), ref.slice(hash + 1), origin);
}

/** Replaces every reference in `text` (to be typed on a page of `origin`); each resolved value is added to `masker`
 * before it is used. */
export async function resolveTemplates(
  text: string,
  sources: TemplateSources,
  masker: SecretMasker,
  origin?: string,
): Promise<string> {
  const refs = findTemplates(text);
  if (refs.length === 0) return text;
  let out = '';
  let last = 0;
  for (const m of text.matchAll(TEMPLATE_RE)) {
    const [raw, kind, ref] = [m[0], m[1]!, m[2]!];
    if (!isValid(kind, ref)) throw new TemplateError(`bad reference "${raw}"`);
    const value = await resolveOne(kind, ref, sources, origin);
    masker.add(value);
    out += text.slice(last, m.index) + value;
    last = (m.index ?? 0) + m[0].length;
  }
  return out + text.slice(last);
}
