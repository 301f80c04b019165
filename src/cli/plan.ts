/**
 * What `sentinel apply` will do: compare the file's monitors with the service's (GET /monitors) and list creates,
 * updates (with a field diff), deletes (`--prune`: monitors managed by this file that it no longer lists) and
 * unchanged ones. Secrets cannot be read back, so a secret counts as changed only when the service has none set (or
 * with `--rotate-secrets`); every update re-sends the file's secrets, which also satisfies the service's rule that a
 * changed target needs its secrets again. Fields the file does not mention are left as they are.
 */
import { CliError, EXIT } from './client.js';
import type { FileMonitor } from './monitors-file.js';
import type { MonitorSummary } from './monitors-api.js';
import { maskEmbedded } from './embedded.js';

export interface FieldChange {
  field: string;
  from?: string;
  to?: string;
  secret?: boolean;
}

export interface Change {
  kind: 'create' | 'update' | 'delete' | 'unchanged';
  name: string;
  type: string;
  want?: FileMonitor;
  have?: MonitorSummary;
  diff: FieldChange[];
}

export interface PlanOptions {
  label: string;
  prune: boolean;
  rotateSecrets: boolean;
}

const UPPER = new Set(['sched', 'typeApi', 'dbType']);

/** The service stores some fields canonicalised (sched upper case, tags without blanks); compare like it. */
export function canonical(field: string, v: string): string {
  if (UPPER.has(field)) return v.toUpperCase();
  if (field === 'tags')
    return v
      .replace(/^\[|\]$/g, '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean)
      .join(',');
  return v;
}

/** A field's value as the plan compares it: '' when absent, an object as JSON (not "[object Object]"). */
function fieldText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  const scalar = v as string | number | boolean | bigint;
  return String(scalar);
}

function diffOf(want: FileMonitor, have: MonitorSummary, o: PlanOptions): FieldChange[] {
  const d: FieldChange[] = [];
  const setSecrets = new Set(have.secretFieldsSet ?? []);
  for (const [k, v] of Object.entries(want.fields)) {
    if (k === 'name') continue;
    if (want.secrets.includes(k)) {
      if (o.rotateSecrets || !setSecrets.has(k)) d.push({ field: k, secret: true });
      continue;
    }
    const cur = fieldText(have[k]);
    // The service shows embedded credentials as ***: compare the file's value masked the same way.
    const mine = cur.includes('***') ? maskEmbedded(k, v) : v;
    if (canonical(k, cur) !== canonical(k, mine)) d.push({ field: k, from: cur, to: maskEmbedded(k, v) });
  }
  if ((have.managedBy ?? '') !== o.label) d.push({ field: 'managedBy', from: fieldText(have.managedBy), to: o.label });
  return d;
}

export function makePlan(file: FileMonitor[], current: MonitorSummary[], o: PlanOptions): Change[] {
  const byName = new Map(current.map((m) => [m.name, m]));
  const out: Change[] = [];
  for (const want of file) {
    const have = byName.get(want.name);
    if (!have) {
      out.push({ kind: 'create', name: want.name, type: want.type, want, diff: [] });
      continue;
    }
    if (have.type !== want.type)
      throw new CliError(
        `${want.name} exists as a ${have.type} monitor, the file says ${want.type}: delete it or rename it first`,
        EXIT.usage,
      );
    const diff = diffOf(want, have, o);
    out.push({ kind: diff.length ? 'update' : 'unchanged', name: want.name, type: want.type, want, have, diff });
  }
  if (o.prune) {
    const listed = new Set(file.map((m) => m.name));
    for (const have of current)
      if (have.managedBy === o.label && !listed.has(have.name))
        out.push({ kind: 'delete', name: have.name, type: have.type, have, diff: [] });
  }
  return out;
}

const SIGN = { create: '+', update: '~', delete: '-', unchanged: '=' } as const;

export function renderPlan(changes: Change[]): string {
  const lines: string[] = [];
  for (const c of changes) {
    if (c.kind === 'unchanged') continue;
    lines.push(`${SIGN[c.kind]} ${c.kind} ${c.name} (${c.type})`);
    for (const f of c.diff)
      lines.push(
        f.secret
          ? `    ${f.field}: (secret set)`
          : `    ${f.field}: ${JSON.stringify(f.from)} → ${JSON.stringify(f.to)}`,
      );
  }
  const n = (k: Change['kind']) => changes.filter((c) => c.kind === k).length;
  lines.push(
    `Plan: ${n('create')} to create, ${n('update')} to update, ${n('delete')} to delete, ${n('unchanged')} unchanged.`,
  );
  return lines.join('\n');
}
