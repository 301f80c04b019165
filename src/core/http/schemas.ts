/**
 * Schema pieces both services' routes share: the response of a file download (declared per content type so that a
 * client knows what comes back; Fastify sends the stream as is) and the documented field-size limits (issue 13
 * item 10, docs/api.md "Field sizes").
 */
import { Type, type StringOptions } from '@sinclair/typebox';

/** A 2xx answer that is a file of one of these media types. */
export function fileResponse(description: string, types: readonly string[]) {
  const schema = { type: 'string', format: 'binary' } as const;
  return { description, content: Object.fromEntries(types.map((t) => [t, { schema }])) };
}

/** Field-size limits in characters (docs/api.md lists them). */
export const MAX = {
  /** short free text without a limit of its own: display names, labels, single values, URLs, host names */
  text: 2048,
  /** header lists, recipient lists, CIDR lists, process and port lists */
  list: 8192,
  /** request bodies an api monitor sends */
  body: 65_536,
  /** PEM certificates and keys, named secret values */
  pem: 65_536,
} as const;

/** maxItems of a request array without its own. */
export const DEFAULT_MAX_ITEMS = 1000;

/**
 * Gives every string of a request schema without a maxLength (and without an enum) MAX.text, and every array without
 * a maxItems DEFAULT_MAX_ITEMS, in place. Fields that need more declare it (queries, bodies, PEM, scripts).
 */
export function boundStrings(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) {
    for (const s of schema) boundStrings(s);
    return;
  }
  const s = schema as Record<string, unknown>;
  if (s.type === 'string' && s.maxLength === undefined && s.enum === undefined && s.const === undefined)
    s.maxLength = MAX.text;
  if (s.type === 'array' && s.maxItems === undefined) s.maxItems = DEFAULT_MAX_ITEMS;
  for (const k of ['properties', 'patternProperties'] as const)
    if (s[k] && typeof s[k] === 'object') for (const v of Object.values(s[k])) boundStrings(v);
  for (const k of ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not'] as const) boundStrings(s[k]);
}

/** OpenAPI extension of a closed set the service matches in any case (and without surrounding spaces). */
export const ANY_CASE = 'x-anyCase';

/**
 * A closed set of string values. `optional`: '' is accepted too and means "not set, use the default" (the services
 * treat an empty value as absent, and the dashboard sends '' for "(default)"). `anyCase`: "get" is taken as "GET".
 */
export function Choice(
  values: readonly string[],
  opts: StringOptions & { optional?: boolean; anyCase?: boolean } = {},
) {
  const { optional, anyCase, ...rest } = opts;
  return Type.String({
    ...rest,
    enum: optional ? [...values, ''] : [...values],
    ...(anyCase ? { [ANY_CASE]: true } : {}),
  });
}

/** The closed set of a property schema marked ANY_CASE: its enum. */
function closedSet(s: Record<string, unknown> | undefined): string[] | undefined {
  if (!s?.[ANY_CASE] || !Array.isArray(s.enum)) return undefined;
  return s.enum.filter((v): v is string => typeof v === 'string');
}

/**
 * Closed sets marked ANY_CASE (the ones the services always matched in any case: sched, typeApi, dbType, recordType,
 * the SNMP version and protocols, ignoreTlsErrors) accept any case and surrounding spaces ("get" → "GET"): a value
 * that matches exactly one member that way is replaced by it before validation. Flat bodies only.
 */
export function canonicalEnums(body: unknown, schema: unknown): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const props = (schema as { properties?: Record<string, Record<string, unknown>> } | undefined)?.properties;
  if (!props) return;
  const b = body as Record<string, unknown>;
  for (const [k, v] of Object.entries(b)) {
    if (typeof v !== 'string') continue;
    const set = closedSet(props[k]);
    if (!set || set.includes(v)) continue;
    const want = v.trim().toLowerCase();
    const hits = set.filter((x) => x.toLowerCase() === want);
    if (hits.length === 1) b[k] = hits[0];
  }
}

/** A string schema with a maxLength (default: MAX.text). */
export function Str(opts: StringOptions = {}) {
  return Type.String({ maxLength: MAX.text, ...opts });
}
