/**
 * The CLI's saved logins, one per service kind: `${SENTINEL_CONFIG_DIR}` or `$XDG_CONFIG_HOME/sentinel` or
 * `~/.config/sentinel`, folder 0700, `config.json` 0600 (it holds bearer tokens). Versioned like every persisted file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type ServiceKind = 'monitor' | 'agent';

export interface Profile {
  server: string;
  certDir: string;
  username: string;
  token: string;
  issuedMs: number;
  expiresMs: number;
}

export interface CliConfig {
  version: 1;
  monitor?: Profile;
  agent?: Profile;
}

export const CONFIG_VERSION = 1;

export function configDir(env: NodeJS.ProcessEnv): string {
  if (env.SENTINEL_CONFIG_DIR) return env.SENTINEL_CONFIG_DIR;
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'sentinel');
}

export function loadConfig(env: NodeJS.ProcessEnv): CliConfig {
  const file = path.join(configDir(env), 'config.json');
  if (!fs.existsSync(file)) return { version: CONFIG_VERSION };
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<CliConfig>;
  if (parsed.version !== CONFIG_VERSION)
    throw new Error(`${file}: version ${String(parsed.version)} is not one this sentinel knows (${CONFIG_VERSION})`);
  return parsed as CliConfig;
}

export function saveConfig(env: NodeJS.ProcessEnv, cfg: CliConfig): void {
  const dir = configDir(env);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const file = path.join(dir, 'config.json');
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}
