/**
 * The OpenAPI proof's tools (issue 14 §1): a request generator that reads nothing but the served document (required
 * fields, a property's example, an enum's first value, formats, minimum, minLength, patterns) and an Ajv validator of
 * the answers against the response schema declared for their status.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** An OpenAPI 3.0 schema object, as much of it as the generator reads. */
export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  example?: unknown;
  examples?: unknown[];
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  minItems?: number;
  minProperties?: number;
  [k: string]: unknown;
}

export interface Operation {
  method: string;
  path: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Schema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

const CANDIDATES = ['1', 'x', 'a1', '800x600', 'example', '1234567890123456789012345', 'a'.repeat(30)];

function stringFor(s: Schema, where: string): string {
  switch (s.format) {
    case 'email':
      return 'user@example.com';
    case 'uri':
      return 'https://127.0.0.1:1/';
    case 'date-time':
      return new Date(0).toISOString();
    case 'ipv4':
      return '127.0.0.1';
  }
  const min = s.minLength ?? 0;
  const ok = (v: string) =>
    v.length >= min && v.length <= (s.maxLength ?? Infinity) && (!s.pattern || new RegExp(s.pattern).test(v));
  const found = [...CANDIDATES, 'x'.repeat(Math.max(1, min)), '1'.repeat(Math.max(1, min))].find(ok);
  if (found === undefined) throw new Error(`${where}: no value fits ${JSON.stringify(s)}; give it an example`);
  return found;
}

/** One valid value of a schema, from the schema alone. */
export function generate(s: Schema, where = '$'): unknown {
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.enum) return s.enum.find((v) => v !== '') ?? s.enum[0];
  if (s.const !== undefined) return s.const;
  const alt = s.anyOf ?? s.oneOf;
  if (alt?.length) return generate(alt.find((a) => a.type !== 'null') ?? alt[0]!, where);
  if (s.allOf?.length) return Object.assign({}, ...s.allOf.map((a) => generate(a, where)));
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = s.properties ?? {};
      const keys = s.required?.length ? s.required : (s.minProperties ?? 0) > 0 ? Object.keys(props).slice(0, 1) : [];
      for (const k of keys) out[k] = generate(props[k] ?? { type: 'string' }, `${where}.${k}`);
      return out;
    }
    case 'array':
      return Array.from({ length: s.minItems ?? 0 }, (_, i) => generate(s.items ?? {}, `${where}[${i}]`));
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return s.type === 'string' || s.type === undefined ? stringFor(s, where) : null;
  }
}

/** The path with every path parameter filled, and the query string of the required query parameters. */
export function requestUrl(op: Operation): string {
  let url = op.path;
  const query: string[] = [];
  for (const p of op.parameters ?? []) {
    const v = String(generate(p.schema, `${op.path} ${p.in}.${p.name}`));
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(v));
    else if (p.in === 'query' && p.required) query.push(`${p.name}=${encodeURIComponent(v)}`);
  }
  return query.length ? `${url}?${query.join('&')}` : url;
}

/** The body of a valid request, or undefined when the route takes none. */
export function requestBody(op: Operation): unknown {
  const schema = op.requestBody?.content['application/json']?.schema;
  return schema ? generate(schema, `${op.method} ${op.path} body`) : undefined;
}

/** Compiles response schemas once each (OpenAPI 3.0: nullable, example). */
export function responseValidator(): (schema: Schema) => ValidateFunction {
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  const addFormats = addFormatsModule as unknown as (a: Ajv) => void;
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'example' });
  const cache = new Map<Schema, ValidateFunction>();
  return (schema) => {
    let v = cache.get(schema);
    if (!v) cache.set(schema, (v = ajv.compile(schema)));
    return v;
  };
}

/** Every operation of a document. */
export function operations(doc: { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> }) {
  const out: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) out.push({ ...op, method: method.toUpperCase(), path });
  return out;
}
