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
  /** names, ids, user names, labels */
  name: 128,
  /** short free text: display names, descriptions, locations, single values */
  text: 2048,
  /** URLs and host names */
  url: 2048,
  /** header lists, recipient lists, tag lists */
  list: 8192,
  /** SQL queries, request bodies, templates */
  query: 65_536,
  /** PEM certificates and keys */
  pem: 65_536,
  /** exec step scripts */
  script: 262_144,
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
    if (s[k] && typeof s[k] === 'object') for (const v of Object.values(s[k] as object)) boundStrings(v);
  for (const k of ['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not'] as const) boundStrings(s[k]);
}

/** A string schema with a maxLength (default: MAX.text). */
export function Str(opts: StringOptions = {}) {
  return Type.String({ maxLength: MAX.text, ...opts });
}
