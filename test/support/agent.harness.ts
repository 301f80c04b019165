/**
 * Test harness: the real agent on port 0 with a temporary DATA_DIR, no schedule, an admin client logged in.
 * Only the agent's tests import this.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readConfig, type ServiceConfig } from '../../src/core/config/env.js';
import { certsFrom, HttpsClient } from './https-client.kit.js';
import { createAgentService, type AgentService, type AgentServiceOptions } from '../../src/agent/service.js';

export const HARNESS_ADMIN_PW = 'admin-pass-123';

export interface AgentHarness {
  svc: AgentService;
  url: string;
  dataDir: string;
  admin: HttpsClient;
  close(): Promise<void>;
}

/** The harness agent's configuration on a new temporary DATA_DIR; `env` adds or overrides its variables. */
export function agentTestConfig(env: Record<string, string> = {}): { cfg: ServiceConfig; dataDir: string } {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'agent-test-'));
  const cfg = readConfig('agent', {
    DATA_DIR: dataDir,
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: HARNESS_ADMIN_PW,
    ...env,
  });
  return { cfg, dataDir };
}

/** `env` adds or overrides environment variables of the agent's configuration. */
export async function startAgent(
  opts: AgentServiceOptions = {},
  env: Record<string, string> = {},
): Promise<AgentHarness> {
  const { cfg, dataDir } = agentTestConfig(env);
  const svc = await createAgentService(cfg, { schedule: false, ...opts });
  const url = await svc.start();
  const admin = new HttpsClient(url, certsFrom(cfg.certDir));
  await admin.login('admin', HARNESS_ADMIN_PW, '/api/auth');
  return {
    svc,
    url,
    dataDir,
    admin,
    async close() {
      admin.close();
      await svc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
