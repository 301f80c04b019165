/**
 * `sentinel users list|add|set|delete` (admin), on the monitor service or `--agent`. Passwords are read like the
 * login's (SENTINEL_PASSWORD, a prompt, or stdin), never taken from the command line.
 */
import { CliError, EXIT } from '../client.js';
import { str, type Command } from '../command.js';
import { enc } from '../monitors-api.js';
import { emit, table } from '../output.js';
import { session } from '../session.js';

interface User {
  username: string;
  fullname: string;
  email: string;
  group: string;
  enabled: string;
}

export const users: Command = {
  name: 'users',
  summary: 'List, add, change or delete users (admin)',
  usage:
    'users [list | add NAME --group G | set NAME [--group G] [--enabled true|false] [--password] | delete NAME] [--agent]',
  examples: [
    'sentinel users',
    'sentinel users add ops --group user --email ops@example.com',
    'sentinel users set ops --enabled false',
    'sentinel users delete ops --agent',
  ],
  options: {
    group: { type: 'string' },
    email: { type: 'string' },
    fullname: { type: 'string' },
    enabled: { type: 'string' },
    password: { type: 'boolean' },
    agent: { type: 'boolean' },
  },
  actions: ['list', 'add', 'set', 'delete'],
  async run(ctx) {
    const [action = 'list', name] = ctx.positionals;
    const client = await session(ctx.env, ctx.values.agent ? 'agent' : 'monitor');
    try {
      if (action === 'list') {
        const us = await client.call<User[]>('GET', '/api/users');
        emit(ctx.out, us, () =>
          table(
            ['USER', 'GROUP', 'ENABLED', 'EMAIL'],
            us.map((u) => [u.username, u.group, u.enabled, u.email]),
          ),
        );
        return EXIT.ok;
      }
      if (!name) throw new CliError(`users ${action} needs a user name`, EXIT.usage);
      const fields: Record<string, string> = {};
      for (const k of ['group', 'email', 'fullname', 'enabled']) {
        const v = str(ctx.values, k);
        if (v !== undefined) fields[k] = v;
      }
      if (action === 'add' || (action === 'set' && ctx.values.password))
        fields.password = await ctx.readPassword(`new password for ${name}: `);
      if (action === 'add') await client.call('POST', '/api/users', { username: name, ...fields });
      else if (action === 'set') await client.call('PATCH', '/api/users', { username: name, ...fields });
      else if (action === 'delete') await client.call('DELETE', `/api/users/${enc(name)}`);
      else throw new CliError(`unknown action "${action}" (list, add, set, delete)`, EXIT.usage);
      emit(
        ctx.out,
        { username: name, action },
        () => `${action === 'add' ? 'added' : action === 'set' ? 'changed' : 'deleted'} ${name}`,
      );
      return EXIT.ok;
    } finally {
      client.close();
    }
  },
};

export const backup: Command = {
  name: 'backup',
  summary: "Back up the monitor service's store into its DATA_DIR/backups (admin)",
  usage: 'backup [--database DBNAME]',
  examples: ['sentinel backup', 'sentinel backup --database url --json'],
  options: { database: { type: 'string' } },
  async run(ctx) {
    const client = await session(ctx.env, 'monitor');
    try {
      const r = await client.call<Record<string, unknown>>('POST', '/backupDatabase', {
        database: str(ctx.values, 'database') ?? 'url',
      });
      emit(ctx.out, r, () =>
        Object.entries(r)
          .map(([k, v]) => `${k}: ${String(v)}`)
          .join('\n'),
      );
      return EXIT.ok;
    } finally {
      client.close();
    }
  },
};
