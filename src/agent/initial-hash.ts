/**
 * The agent hashes the initial admin password of a first start in a short-lived child process (decision 164).
 * argon2id's 19 MiB buffer is mmapped and freed; in this process that raises glibc's dynamic mmap threshold, and
 * the later frees of the start then stay resident (≈ 3–4 MB of idle RSS: docs/benchmarks.md). A child's allocator
 * goes away with it, and the agent does not load the native argon2 library until the first login.
 * The password goes to the child on stdin (never in its argv, which /proc shows); the hash comes back on stdout.
 * Should the child fail, the password is hashed here as before (logged): the residue is a cost, never an error.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import { ARGON2_PARAMS, hashPassword } from '../core/auth/passwords.js';

const CHILD_TIMEOUT_MS = 30_000;

// Reads {module, params, password} from stdin, writes the hash to stdout. Plain CommonJS: no loader, no tsx.
const CHILD_SCRIPT = `let b = '';
process.stdin.setEncoding('utf8').on('data', (c) => (b += c)).on('end', () => {
  const { module, params, password } = JSON.parse(b);
  process.stdout.write(require(module).hashSync(password, params));
});`;

/** The argon2id hash of `password`, made by a child node process with the same parameters as hashPassword(). */
export function hashInChild(password: string, timeoutMs = CHILD_TIMEOUT_MS): Promise<string> {
  const module = createRequire(import.meta.url).resolve('@node-rs/argon2');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CHILD_SCRIPT], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
      timeout: timeoutMs,
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0 && out.startsWith('$argon2id$')) resolve(out);
      else reject(new Error(`hash child exited (${signal ?? code}): ${err.trim().slice(0, 300)}`));
    });
    child.stdin.on('error', () => undefined); // an early exit is reported by 'close'
    child.stdin.end(JSON.stringify({ module, params: ARGON2_PARAMS, password }));
  });
}

/** The platform's hashInitialPassword for the agent: in a child, else (logged) here. */
export async function hashInitialPassword(password: string, log: Logger): Promise<string> {
  try {
    return await hashInChild(password);
  } catch (e) {
    log.warn({ err: e }, 'hashing the initial admin password in a child process failed; hashing it in the agent');
    return hashPassword(password);
  }
}
