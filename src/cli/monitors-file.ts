/**
 * The monitors file (docs/cli.md): YAML, `version: 1`, `monitors:` a list of maps, each with `name`, `type` and the
 * type's create fields. Scalars become the API's strings; `tags` may be a list; a map or list elsewhere (exec
 * `steps`) becomes its JSON text. `${ENV_VAR}` is replaced from the environment anywhere; a secret field (writeOnly in
 * the service's OpenAPI) must be exactly one `${ENV_VAR}`, never a literal. Errors name the file, line and field.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair } from 'yaml';

export const FILE_VERSION = 1;

export interface FileMonitor {
  name: string;
  type: string;
  /** Every field of the entry as the API's string, secrets resolved (name and type excluded). */
  fields: Record<string, string>;
  /** The secret fields the entry sets (their values are in `fields`). */
  secrets: string[];
  line: number;
  lines: Record<string, number>;
}

export interface TypeInfo {
  /** The create body's JSON schema, from the service's OpenAPI. */
  schema: Record<string, unknown>;
  secrets: Set<string>;
  required: string[];
}

export class FileErrors extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('\n'));
  }
}

const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const ONE_REF = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

function valueText(node: unknown, key: string): string | undefined {
  if (isScalar(node)) {
    // A string, number, boolean or null: the core schema, no custom tags are enabled.
    const value = node.value as string | number | boolean | null;
    return value === null ? '' : String(value);
  }
  if (isSeq(node) && key === 'tags') return `[${node.toJSON().map(String).join(',')}]`;
  if (isSeq(node) || isMap(node)) return JSON.stringify((node as Node).toJSON());
  return undefined;
}

export function parseMonitorsFile(
  text: string,
  file: string,
  types: ReadonlyMap<string, TypeInfo>,
  env: NodeJS.ProcessEnv,
): FileMonitor[] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const at = (n: { range?: [number, number, number?] | null } | null | undefined) =>
    n?.range ? lc.linePos(n.range[0]).line : 1;
  const errors = doc.errors.map((e) => `${file}:${lc.linePos(e.pos[0]).line}: ${e.message.split('\n')[0]}`);
  if (errors.length) throw new FileErrors(errors);
  const root = doc.contents;
  if (!isMap(root)) throw new FileErrors([`${file}:1: expected a map with version and monitors`]);
  const version = root.get('version');
  if (version !== undefined && Number(version) !== FILE_VERSION)
    errors.push(`${file}:${at(root.get('version', true))}: version ${String(version)} is not ${FILE_VERSION}`);
  for (const p of root.items as Pair[])
    if (!['version', 'monitors'].includes(String((p.key as { value?: unknown })?.value)))
      errors.push(
        `${file}:${at(p.key as Node)}: unknown top-level key ${String((p.key as { value?: unknown })?.value)}`,
      );
  const list = root.get('monitors', true);
  if (list !== undefined && !isSeq(list)) errors.push(`${file}:${at(list)}: monitors must be a list`);
  const out: FileMonitor[] = [];
  const seen = new Map<string, number>();
  for (const item of isSeq(list) ? list.items : []) {
    const m = entry(item as Node, file, types, env, at, errors);
    if (!m) continue;
    if (seen.has(m.name))
      errors.push(`${file}:${m.line}: name ${m.name} is already used at line ${seen.get(m.name)} (names are unique)`);
    seen.set(m.name, m.line);
    out.push(m);
  }
  if (errors.length) throw new FileErrors(errors);
  return out;
}

function entry(
  item: Node,
  file: string,
  types: ReadonlyMap<string, TypeInfo>,
  env: NodeJS.ProcessEnv,
  at: (n: Node | null | undefined) => number,
  errors: string[],
): FileMonitor | undefined {
  const line = at(item);
  if (!isMap(item)) return void errors.push(`${file}:${line}: each monitor must be a map`);
  const raw: Record<string, { text: string; line: number }> = {};
  for (const p of item.items) {
    const key = String((p.key as { value?: unknown })?.value);
    const text = valueText(p.value, key);
    if (text === undefined) errors.push(`${file}:${at(p.key as Node)}: ${key}: unsupported value`);
    else raw[key] = { text, line: at(p.key as Node) };
  }
  const name = raw.name?.text;
  const type = raw.type?.text;
  if (!name) return void errors.push(`${file}:${line}: a monitor needs a name`);
  const info = type ? types.get(type) : undefined;
  if (!info) {
    const known = [...types.keys()].join(', ');
    return void errors.push(`${file}:${raw.type?.line ?? line}: ${name}: type must be one of ${known}`);
  }
  const fields: Record<string, string> = {};
  const lines: Record<string, number> = {};
  const secrets: string[] = [];
  for (const [k, { text, line: l }] of Object.entries(raw)) {
    if (k === 'type') continue;
    lines[k] = l;
    if (info.secrets.has(k)) {
      secrets.push(k);
      if (!ONE_REF.test(text)) {
        errors.push(`${file}:${l}: ${name}: ${k} is a secret: write a reference \${ENV_VAR}, not a literal value`);
        continue;
      }
    }
    const missing = [...text.matchAll(REF)].map((m) => m[1]!).filter((v) => env[v] === undefined);
    if (missing.length)
      errors.push(`${file}:${l}: ${name}: ${k}: environment variable ${missing.join(', ')} is not set`);
    fields[k] = text.replace(REF, (_, v: string) => env[v] ?? '');
  }
  return { name, type: type!, fields, secrets, line, lines };
}
