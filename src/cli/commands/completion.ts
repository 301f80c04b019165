/**
 * `sentinel completion bash|zsh`: a completion script derived from the command registry (commands, their
 * sub-actions and options), to be sourced from the shell's startup file.
 */
import { CliError, EXIT } from '../client.js';
import type { Command } from '../command.js';

export function completionScript(shell: string, commands: readonly Command[]): string {
  const words = (c: Command) => [
    ...(c.actions ?? []),
    ...Object.keys(c.options).map((o) => `--${o}`),
    '--json',
    '--help',
  ];
  const names = commands.map((c) => c.name).join(' ');
  if (shell === 'bash') {
    const cases = commands.map((c) => `    ${c.name}) opts="${words(c).join(' ')}" ;;`).join('\n');
    return [
      '# sentinel bash completion: eval "$(sentinel completion bash)"',
      '_sentinel() {',
      '  local cur="${COMP_WORDS[COMP_CWORD]}" opts',
      '  if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=($(compgen -W "' + names + '" -- "$cur")); return; fi',
      '  case "${COMP_WORDS[1]}" in',
      cases,
      '    *) opts="" ;;',
      '  esac',
      '  COMPREPLY=($(compgen -W "$opts" -f -- "$cur"))',
      '}',
      'complete -F _sentinel sentinel',
    ].join('\n');
  }
  if (shell === 'zsh') {
    const cases = commands.map((c) => `      ${c.name}) compadd -- ${words(c).join(' ')}; _files ;;`).join('\n');
    return [
      '#compdef sentinel',
      '# sentinel zsh completion: eval "$(sentinel completion zsh)" (after compinit)',
      '_sentinel() {',
      '  if (( CURRENT == 2 )); then compadd -- ' + names + '; return; fi',
      '  case "$words[2]" in',
      cases,
      '  esac',
      '}',
      'compdef _sentinel sentinel',
    ].join('\n');
  }
  throw new CliError(`completion for "${shell}" is not available (bash, zsh)`, EXIT.usage);
}

export function completionCommand(all: () => readonly Command[]): Command {
  return {
    name: 'completion',
    summary: 'Print a shell completion script (bash or zsh)',
    usage: 'completion bash|zsh',
    examples: ['eval "$(sentinel completion bash)"', 'sentinel completion zsh > "${fpath[1]}/_sentinel"'],
    options: {},
    actions: ['bash', 'zsh'],
    async run(ctx) {
      ctx.out.write(completionScript(ctx.positionals[0] ?? 'bash', all()));
      return EXIT.ok;
    },
  };
}
