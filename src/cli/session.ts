/**
 * A logged-in client for a service kind: reads the saved profile, refreshes the token when less than a quarter of
 * its lifetime is left (GET /refresh_token, saved back), and says "run sentinel login" when there is none.
 */
import { ApiClient, CliError, EXIT } from './client.js';
import { loadConfig, saveConfig, type Profile, type ServiceKind } from './config.js';

export interface TokenReply {
  token: string;
  expire: string;
}

export const AUTH_PATHS: Record<ServiceKind, { login: string; defaultServer: string }> = {
  monitor: { login: '/login', defaultServer: 'https://localhost:8051' },
  agent: { login: '/api/auth', defaultServer: 'https://localhost:8070' },
};

export function profileFrom(server: string, certDir: string, username: string, reply: TokenReply): Profile {
  return {
    server,
    certDir,
    username,
    token: reply.token,
    issuedMs: Date.now(),
    expiresMs: Date.parse(reply.expire),
  };
}

export async function session(env: NodeJS.ProcessEnv, kind: ServiceKind, nowMs = Date.now()): Promise<ApiClient> {
  const cfg = loadConfig(env);
  const p = cfg[kind];
  const how = kind === 'agent' ? 'sentinel login --agent' : 'sentinel login';
  if (!p) throw new CliError(`not logged in to a ${kind} service: run \`${how}\``, EXIT.usage);
  if (p.expiresMs <= nowMs) throw new CliError(`the saved ${kind} token has expired: run \`${how}\``, EXIT.usage);
  const client = new ApiClient({ server: p.server, certDir: p.certDir }, p.token);
  const leftMs = p.expiresMs - nowMs;
  if (leftMs < (p.expiresMs - p.issuedMs) / 4) {
    const r = await client.call<TokenReply>('GET', '/refresh_token');
    cfg[kind] = profileFrom(p.server, p.certDir, p.username, r);
    saveConfig(env, cfg);
    client.token = r.token;
  }
  return client;
}
