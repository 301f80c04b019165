/**
 * `sentinel login` / `sentinel logout`: log in to a monitor service (or `--agent`, a discovery agent) with the client
 * certificate folder, save server, folder and token in the config (0600). The password comes from SENTINEL_PASSWORD,
 * a prompt without echo, or one line of stdin.
 */
import path from 'node:path';
import { ApiClient, CliError, EXIT } from '../client.js';
import { str, type Command } from '../command.js';
import { loadConfig, saveConfig, type ServiceKind } from '../config.js';
import { AUTH_PATHS, profileFrom, type TokenReply } from '../session.js';

const kindOf = (agent: unknown): ServiceKind => (agent ? 'agent' : 'monitor');

export const login: Command = {
  name: 'login',
  summary: 'Log in and save the token (refreshed automatically when it nears expiry)',
  usage: 'login [--server URL] [--cert-dir DIR] [--user NAME] [--agent]',
  examples: [
    'sentinel login --server https://localhost:8051 --cert-dir ./data/certs',
    'SENTINEL_PASSWORD=… sentinel login --user ops',
    'sentinel login --agent --server https://db-1:8070 --cert-dir ./data/certs',
  ],
  options: {
    server: { type: 'string' },
    'cert-dir': { type: 'string' },
    user: { type: 'string', short: 'u' },
    agent: { type: 'boolean' },
  },
  async run(ctx) {
    const kind = kindOf(ctx.values.agent);
    const server = str(ctx.values, 'server') ?? ctx.env.SENTINEL_SERVER ?? AUTH_PATHS[kind].defaultServer;
    if (!/^https:\/\//.test(server))
      throw new CliError(`--server must be an https:// URL, got "${server}"`, EXIT.usage);
    const certDir = path.resolve(str(ctx.values, 'cert-dir') ?? ctx.env.SENTINEL_CERT_DIR ?? 'data/certs');
    const username = str(ctx.values, 'user') ?? ctx.env.SENTINEL_USER ?? 'admin';
    const client = new ApiClient({ server, certDir });
    try {
      const password = await ctx.readPassword(`password for ${username} at ${server}: `);
      const reply = await client.call<TokenReply>('POST', AUTH_PATHS[kind].login, { username, password });
      const cfg = loadConfig(ctx.env);
      cfg[kind] = profileFrom(server, certDir, username, reply);
      saveConfig(ctx.env, cfg);
      const data = { server, username, kind, expire: reply.expire };
      ctx.out.write(
        ctx.out.json ? JSON.stringify(data) : `logged in to ${server} as ${username} until ${reply.expire}`,
      );
      return EXIT.ok;
    } finally {
      client.close();
    }
  },
};

export const logout: Command = {
  name: 'logout',
  summary: 'Forget the saved token of the monitor service (or --agent)',
  usage: 'logout [--agent]',
  examples: ['sentinel logout', 'sentinel logout --agent'],
  options: { agent: { type: 'boolean' } },
  async run(ctx) {
    const kind = kindOf(ctx.values.agent);
    const cfg = loadConfig(ctx.env);
    delete cfg[kind];
    saveConfig(ctx.env, cfg);
    ctx.out.write(ctx.out.json ? JSON.stringify({ kind, loggedOut: true }) : `logged out of the ${kind} service`);
    return EXIT.ok;
  },
};
