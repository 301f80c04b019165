/**
 * `sentinel export [--type T] [--tag X] > monitors.yaml`: the service's monitors in the monitors-file format. Only
 * fields of the type's create schema are written; secrets that are set become references `${SENTINEL_<NAME>_<FIELD>}`
 * (the values cannot be read back); `managedBy` is left out. `export` then `apply` on an empty service reproduces the
 * monitors (with those variables set).
 */
import { stringify } from 'yaml';
import { EXIT } from '../client.js';
import { str, type Command } from '../command.js';
import { listMonitors, tagsOf, type MonitorSummary } from '../monitors-api.js';
import { FILE_VERSION } from '../monitors-file.js';
import { referenceEmbedded } from '../embedded.js';
import { loadTypes, type Types } from '../schemas.js';
import { session } from '../session.js';

export function secretVar(name: string, field: string): string {
  return `SENTINEL_${name}_${field}`.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

export function exportEntry(m: MonitorSummary, types: Types): Record<string, unknown> {
  const t = types.get(m.type);
  const props = (t?.schema.properties ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { name: m.name, type: m.type };
  for (const [k, v] of Object.entries(m)) {
    if (k === 'name' || k === 'managedBy' || !(k in props) || t?.secrets.has(k)) continue;
    if (typeof v !== 'string') continue;
    if (k === 'sched' && v === 'CRON') continue;
    if (k === 'tags') out.tags = tagsOf(v);
    else out[k] = v.includes('***') ? referenceEmbedded(k, v, `SENTINEL_${m.name}_${k}`) : v;
  }
  for (const s of m.secretFieldsSet ?? []) if (s in props) out[s] = `\${${secretVar(m.name, s)}}`;
  return out;
}

export function exportDocument(ms: MonitorSummary[], types: Types): string {
  const header =
    '# Sentinel monitors file (docs/cli.md). Secrets are references: set the ${...} variables before `sentinel apply`.\n';
  return (
    header + stringify({ version: FILE_VERSION, monitors: ms.map((m) => exportEntry(m, types)) }, { lineWidth: 0 })
  );
}

export const exportCmd: Command = {
  name: 'export',
  summary: 'Write the monitors as a monitors file (secrets as ${VAR} references) to stdout',
  usage: 'export [--type T] [--tag X]',
  examples: ['sentinel export > monitors.yaml', 'sentinel export --type url --tag prod > web.yaml'],
  options: { type: { type: 'string' }, tag: { type: 'string' } },
  async run(ctx) {
    const client = await session(ctx.env, 'monitor');
    try {
      const types = await loadTypes(client);
      const ms = await listMonitors(client, { type: str(ctx.values, 'type'), tag: str(ctx.values, 'tag') });
      ms.sort((a, b) => a.name.localeCompare(b.name));
      if (ctx.out.json)
        ctx.out.write(
          JSON.stringify({ version: FILE_VERSION, monitors: ms.map((m) => exportEntry(m, types)) }, null, 2),
        );
      else ctx.out.write(exportDocument(ms, types));
      return EXIT.ok;
    } finally {
      client.close();
    }
  },
};
