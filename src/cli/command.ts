/**
 * What a subcommand is: a name, help with examples, its options (node:util parseArgs), and a run function that
 * returns an exit code. Commands are listed in commands/index.ts (the registry); help and completion derive from it.
 */
import type { ParseArgsConfig } from 'node:util';
import type { Out } from './output.js';

export type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Context {
  positionals: string[];
  values: Values;
  env: NodeJS.ProcessEnv;
  out: Out;
  /** SENTINEL_PASSWORD, else a prompt without echo on a terminal, else one line of stdin. */
  readPassword(prompt: string): Promise<string>;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  examples: string[];
  options: Options;
  /** Words completion offers after the command name (sub-actions). */
  actions?: string[];
  run(ctx: Context): Promise<number>;
}

export function str(v: Values, key: string): string | undefined {
  const x = v[key];
  return typeof x === 'string' ? x : undefined;
}

export function helpText(c: Command): string {
  const opts = Object.entries(c.options).map(
    ([k, o]) => `  --${k}${o.type === 'string' ? ' VALUE' : ''}${o.short ? `, -${o.short}` : ''}`,
  );
  return [
    `sentinel ${c.usage}`,
    '',
    c.summary,
    ...(opts.length ? ['', 'Options:', ...opts, '  --json          output JSON for scripts'] : []),
    '',
    'Examples:',
    ...c.examples.map((e) => `  ${e}`),
  ].join('\n');
}
