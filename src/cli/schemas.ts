/**
 * The service's own create schemas, read from its served OpenAPI document (`/docs/index.html/json`): which monitor
 * types exist, their fields, which are secrets (`writeOnly`) and which are required. A monitors file is validated
 * with Ajv against exactly what the service will enforce, so errors come before anything is changed.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { canonicalEnums } from '../core/http/schemas.js';
import type { ApiClient } from './client.js';
import { FileErrors, type FileMonitor, type TypeInfo } from './monitors-file.js';

interface Operation {
  description?: string;
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
}
interface OpenApiDoc {
  paths: Record<string, Record<string, Operation>>;
}

export type Types = Map<string, TypeInfo & { validate: ValidateFunction }>;

export function typesFromOpenApi(doc: OpenApiDoc): Types {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const out: Types = new Map();
  for (const [p, ops] of Object.entries(doc.paths)) {
    const m = /^\/([a-z]+)\/create$/.exec(p);
    const op = ops.post;
    const schema = op?.requestBody?.content?.['application/json']?.schema;
    if (!m || !op || !schema) continue;
    const props = (schema.properties ?? {}) as Record<string, { writeOnly?: boolean }>;
    const described = /Secrets \(([^)]*)\)/.exec(op.description ?? '')?.[1]?.split(',') ?? [];
    const secrets = new Set([
      ...Object.entries(props)
        .filter(([, s]) => s.writeOnly)
        .map(([k]) => k),
      ...described.map((s) => s.trim()).filter((s) => s && s !== 'none'),
    ]);
    const required = Array.isArray(schema.required)
      ? (schema.required as string[])
      : (/Required: ([^.]+)\./
          .exec(op.description ?? '')?.[1]
          ?.split(',')
          .map((s) => s.trim()) ?? ['name']);
    out.set(m[1]!, { schema, secrets, required, validate: ajv.compile({ ...schema, required }) });
  }
  return out;
}

export async function loadTypes(client: ApiClient): Promise<Types> {
  return typesFromOpenApi(await client.call<OpenApiDoc>('GET', '/docs/index.html/json'));
}

function fieldOf(e: ErrorObject): string {
  const p = e.params as { missingProperty?: string; additionalProperty?: string };
  return p.missingProperty ?? p.additionalProperty ?? e.instancePath.replace(/^\//, '');
}

/** Every entry against its type's schema; errors as `file:line: name: field: message`. */
export function validateMonitors(ms: FileMonitor[], types: Types, file: string): void {
  const errors: string[] = [];
  for (const m of ms) {
    if ('managedBy' in m.fields)
      errors.push(`${file}:${m.lines.managedBy}: ${m.name}: managedBy is set by sentinel apply, not in the file`);
    const t = types.get(m.type)!;
    // The service matches closed sets in any case ("get" is GET): validate what it will see.
    const fields = { ...m.fields };
    canonicalEnums(fields, t.schema);
    if (t.validate(fields)) continue;
    for (const e of t.validate.errors ?? []) {
      const field = fieldOf(e);
      const what =
        e.keyword === 'additionalProperties'
          ? `unknown field for a ${m.type} monitor`
          : e.keyword === 'required'
            ? 'is required'
            : (e.message ?? 'is invalid');
      errors.push(`${file}:${m.lines[field] ?? m.line}: ${m.name}: ${field}: ${what}`);
    }
  }
  if (errors.length) throw new FileErrors(errors);
}
