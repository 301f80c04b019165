/**
 * Runs `sentinel` (bin/sentinel.mjs) as a subprocess with its own config folder, asynchronously so that services
 * started in the test's own process keep answering.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BIN = path.resolve('bin/sentinel.mjs');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Cli {
  configDir: string;
  run(args: string[], env?: Record<string, string>, input?: string): Promise<CliRun>;
  json<T = any>(args: string[], env?: Record<string, string>): Promise<T>;
}

export function makeCli(): Cli {
  const configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sentinel-cli-'));
  const run = (args: string[], env: Record<string, string> = {}, input?: string) =>
    new Promise<CliRun>((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, ...args],
        {
          env: {
            ...process.env,
            SENTINEL_CONFIG_DIR: configDir,
            SENTINEL_PASSWORD: '',
            SENTINEL_CLI_SOURCE: '1',
            ...env,
          },
          timeout: 120_000,
        },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      if (input !== undefined) child.stdin!.end(input);
      else child.stdin!.end();
    });
  return {
    configDir,
    run,
    async json(args, env) {
      const r = await run([...args, '--json'], env);
      if (r.code !== 0 && r.code !== 3) throw new Error(`sentinel ${args.join(' ')} → ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    },
  };
}
