/**
 * `sentinel apply -f FILE [--prune] [--dry-run] [--rotate-secrets]`: validate the monitors file against the service's
 * own schemas, print the plan, then carry it out (creates, updates, deletes with --prune). Monitors it creates or
 * updates are marked `managedBy: <file name>`. A second apply of the same file plans nothing. Secrets the service
 * generates at create (a push monitor's token) are printed once, as the API shows them once (`generated` in --json).
 */
import fs from 'node:fs';
import path from 'node:path';
import { CliError, EXIT, type ApiClient } from '../client.js';
import { str, type Command } from '../command.js';
import { enc, listMonitors } from '../monitors-api.js';
import { FileErrors, parseMonitorsFile } from '../monitors-file.js';
import { makePlan, renderPlan, type Change } from '../plan.js';
import { loadTypes, validateMonitors } from '../schemas.js';
import { session } from '../session.js';

/** Carries out one change; a create returns what the service generated for it (push: `token`), if anything. */
async function carryOut(client: ApiClient, c: Change, label: string): Promise<Record<string, string> | undefined> {
  if (c.kind === 'create') {
    const made = await client.call<{ generated?: Record<string, string> }>('POST', `/${c.type}/create`, {
      ...c.want!.fields,
      managedBy: label,
    });
    return made?.generated;
  } else if (c.kind === 'update') {
    const body: Record<string, string> = { managedBy: label };
    for (const f of c.diff) if (f.field !== 'managedBy' && !f.secret) body[f.field] = c.want!.fields[f.field]!;
    for (const s of c.want!.secrets) body[s] = c.want!.fields[s]!;
    await client.call('POST', `/${c.type}/update/${enc(c.have!.sched)}/${enc(c.name)}`, body);
  } else if (c.kind === 'delete') {
    await client.call('DELETE', `/delete/exec/${enc(c.have!.sched)}/${enc(c.name)}`);
  }
}

export const apply: Command = {
  name: 'apply',
  summary: 'Make the service match a monitors file: validate, show the plan, apply it',
  usage: 'apply -f FILE [--prune] [--dry-run] [--rotate-secrets]',
  examples: [
    'sentinel apply -f monitors.yaml --dry-run',
    'WEB_PASSWORD=… sentinel apply -f monitors.yaml',
    'sentinel apply -f monitors.yaml --prune --json',
  ],
  options: {
    file: { type: 'string', short: 'f' },
    prune: { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    'rotate-secrets': { type: 'boolean' },
  },
  async run(ctx) {
    const file = str(ctx.values, 'file');
    if (!file) throw new CliError('apply needs -f FILE', EXIT.usage);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new CliError(`cannot read ${file}: ${(e as Error).message}`, EXIT.usage);
    }
    const label = path.basename(file);
    const client = await session(ctx.env, 'monitor');
    try {
      const types = await loadTypes(client);
      let changes: Change[];
      try {
        const ms = parseMonitorsFile(text, file, types, ctx.env);
        validateMonitors(ms, types, file);
        const current = await listMonitors(client);
        changes = makePlan(ms, current, {
          label,
          prune: Boolean(ctx.values.prune),
          rotateSecrets: Boolean(ctx.values['rotate-secrets']),
        });
      } catch (e) {
        if (e instanceof FileErrors) throw new CliError(`${file} is not valid:\n${e.message}`, EXIT.usage);
        throw e;
      }
      const dry = Boolean(ctx.values['dry-run']);
      const done: Change[] = [];
      const generated: Array<{ name: string; type: string; generated: Record<string, string> }> = [];
      if (!ctx.out.json) ctx.out.write(renderPlan(changes));
      for (const c of dry ? [] : changes.filter((x) => x.kind !== 'unchanged')) {
        try {
          const g = await carryOut(client, c, label);
          if (g && Object.keys(g).length) generated.push({ name: c.name, type: c.type, generated: g });
        } catch (e) {
          const summary = done.map((d) => `${d.kind} ${d.name}`).join(', ') || 'nothing';
          throw new CliError(`${c.kind} ${c.name} failed: ${(e as Error).message}\n(done before it: ${summary})`);
        }
        done.push(c);
      }
      const plan = changes.map((c) => ({ kind: c.kind, name: c.name, type: c.type, diff: c.diff }));
      if (ctx.out.json)
        ctx.out.write(JSON.stringify({ file: label, dryRun: dry, plan, applied: done.length, generated }, null, 2));
      else if (!dry && done.length) ctx.out.write(`Applied ${done.length} change${done.length === 1 ? '' : 's'}.`);
      if (!ctx.out.json)
        for (const g of generated)
          for (const [k, v] of Object.entries(g.generated))
            ctx.out.write(`${g.type} ${g.name}: ${k} ${v} (shown this once: store it now; rotate to get a new one)`);
      return EXIT.ok;
    } finally {
      client.close();
    }
  },
};
