/**
 * `sentinel`: the command-line client of the monitor service and the discovery agent (docs/cli.md). Parses the
 * command line, runs one command from the registry, prints the API's message on failure (never a stack trace) and
 * exits with the command's code (0 ok, 1 the service refused or was unreachable, 2 usage or invalid file, 3 problems
 * found: failing monitors for `status`).
 */
import { parseArgs } from 'node:util';
import { CliError, EXIT } from './client.js';
import { helpText, type Command } from './command.js';
import { COMMANDS } from './commands/index.js';
import { processOut } from './output.js';
import { readPassword } from './password.js';

function overview(): string {
  const w = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'sentinel — command-line client of the Sentinel monitor service and discovery agent',
    '',
    'Usage: sentinel <command> [options]   (sentinel <command> --help for its options and examples)',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`),
    '',
    'Examples:',
    '  sentinel login --server https://mon.example:8051 --cert-dir ./data/certs',
    '  sentinel status',
    '  sentinel apply -f monitors.yaml --dry-run',
  ].join('\n');
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const out = processOut(argv.includes('--json'));
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    out.write(overview());
    return name ? EXIT.ok : EXIT.usage;
  }
  const cmd: Command | undefined = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    out.error(`unknown command "${name}"; commands: ${COMMANDS.map((c) => c.name).join(', ')}`);
    return EXIT.usage;
  }
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...cmd.options, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    out.error(`${(e as Error).message}\n\n${helpText(cmd)}`);
    return EXIT.usage;
  }
  if (parsed.values.help) {
    out.write(helpText(cmd));
    return EXIT.ok;
  }
  try {
    return await cmd.run({
      positionals: parsed.positionals,
      values: parsed.values,
      env,
      out,
      readPassword: (p) => readPassword(env, p),
    });
  } catch (e) {
    if (e instanceof CliError) {
      out.error(`sentinel ${name}: ${e.message}`);
      return e.exitCode;
    }
    out.error(`sentinel ${name}: ${(e as Error).message ?? String(e)}`);
    return EXIT.failed;
  }
}
