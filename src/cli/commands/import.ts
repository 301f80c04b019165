/**
 * `sentinel import --from uptime-kuma|gatus FILE [-o OUT]`: convert another tool's monitors into a monitors file for
 * review (it applies nothing). What could not be mapped, and what changed meaning, is printed on stderr (and as
 * comments in the file); `--json` prints { monitors, skipped, notes }.
 */
import fs from 'node:fs';
import { Document } from 'yaml';
import { CliError, EXIT } from '../client.js';
import { str, type Command } from '../command.js';
import type { Imported, Importer } from '../importers/common.js';
import { fromGatus } from '../importers/gatus.js';
import { fromUptimeKuma } from '../importers/uptime-kuma.js';
import { FILE_VERSION } from '../monitors-file.js';

export const IMPORTERS: Record<string, Importer> = { 'uptime-kuma': fromUptimeKuma, gatus: fromGatus };

export function importedYaml(r: Imported, source: string): string {
  const doc = new Document({ version: FILE_VERSION, monitors: r.monitors });
  doc.commentBefore = ` Imported from ${source} by sentinel import: review, then sentinel apply -f <this file>.`;
  const seq = doc.get('monitors', true) as { items: Array<{ commentBefore?: string }> };
  r.monitors.forEach((m, i) => {
    const notes = r.notes.filter((n) => n.name === m.name).map((n) => ` NOTE: ${n.note}`);
    if (notes.length) seq.items[i]!.commentBefore = notes.join('\n');
  });
  const skipped = r.skipped.map((s) => ` not imported: ${s.name}: ${s.reason}`);
  return doc.toString({ lineWidth: 0 }) + (skipped.length ? `#${skipped.join('\n#')}\n` : '');
}

export const importCmd: Command = {
  name: 'import',
  summary: "Convert Uptime Kuma's backup or Gatus's config into a monitors file for review",
  usage: 'import --from uptime-kuma|gatus FILE [-o OUT]',
  examples: [
    'sentinel import --from uptime-kuma kuma-backup.json > monitors.yaml',
    'sentinel import --from gatus config.yaml -o monitors.yaml',
  ],
  options: { from: { type: 'string' }, output: { type: 'string', short: 'o' } },
  actions: Object.keys(IMPORTERS).map((k) => `--from=${k}`),
  async run(ctx) {
    const from = str(ctx.values, 'from');
    const importer = from ? IMPORTERS[from] : undefined;
    if (!importer) throw new CliError(`--from must be one of ${Object.keys(IMPORTERS).join(', ')}`, EXIT.usage);
    const file = ctx.positionals[0];
    if (!file) throw new CliError('import needs the file to read', EXIT.usage);
    let r: Imported;
    try {
      r = importer(fs.readFileSync(file, 'utf8'), file);
    } catch (e) {
      throw new CliError(`${file}: ${(e as Error).message.split('\n')[0]}`, EXIT.usage);
    }
    const text = ctx.out.json ? JSON.stringify(r, null, 2) : importedYaml(r, `${from} (${file})`);
    const outFile = str(ctx.values, 'output');
    if (outFile) fs.writeFileSync(outFile, text, { mode: 0o600 });
    else ctx.out.write(text);
    if (!ctx.out.json) {
      ctx.out.error(`imported ${r.monitors.length} monitors, ${r.skipped.length} not imported`);
      for (const s of r.skipped) ctx.out.error(`  not imported: ${s.name}: ${s.reason}`);
      for (const n of r.notes) ctx.out.error(`  note: ${n.name}: ${n.note}`);
    }
    return EXIT.ok;
  },
};
