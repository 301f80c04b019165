/**
 * Chromium's sandbox (docs/security.md §12). Chromium refuses its sandbox as root, and without the sandbox a renderer
 * exploit runs with the service's rights (DATA_DIR keys in reach). So, decided once per process:
 *   - not root: the sandbox is on when the kernel lets this user create a user namespace (`unshare --user`);
 *   - root: the browser is started as a dedicated unprivileged account — `sentinel` if it exists, else `nobody` —
 *     through a small wrapper (`setpriv --reuid --regid --clear-groups`, which keeps Playwright's pipe descriptors)
 *     that hands the browser its temporary profile folder, and the sandbox is on when that account can create a user
 *     namespace;
 *   - otherwise (no user namespaces, no setpriv, no such account): `--no-sandbox`, with the reason logged as a warning
 *     at the first launch. The mitigation then is the network policy and running the service in a container or VM.
 * The browser never gets a file of DATA_DIR: screenshots, HAR and video are written by the service's own process.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SandboxPlan {
  /** True: launched without --no-sandbox. */
  sandbox: boolean;
  /** The account the browser runs as when the service is root. */
  runAs?: { name: string; uid: number; gid: number };
  /** Why the sandbox is off (logged). */
  reason?: string;
}

const SETPRIV = '/usr/bin/setpriv';
const UNSHARE = '/usr/bin/unshare';
/** Accounts tried, in order, when the service runs as root. */
export const SANDBOX_ACCOUNTS = ['sentinel', 'nobody'] as const;

function account(name: string): { name: string; uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const f = line.split(':');
      if (f[0] === name && f.length >= 4) return { name, uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    /* no passwd file */
  }
  return undefined;
}

/** Whether `unshare --user true` works (as `as`, through setpriv, when given). */
function userNamespaces(as?: { uid: number; gid: number }): boolean {
  if (!existsSync(UNSHARE)) return false;
  const cmd = as
    ? [SETPRIV, [`--reuid=${as.uid}`, `--regid=${as.gid}`, '--clear-groups', '--', UNSHARE, '--user', 'true']]
    : [UNSHARE, ['--user', 'true']];
  const r = spawnSync(cmd[0] as string, cmd[1] as string[], { stdio: 'ignore', timeout: 5_000 });
  return r.status === 0;
}

/** What this machine allows; `uid` is the service's (tests pass another). */
export function detectSandbox(uid = process.getuid?.() ?? 0): SandboxPlan {
  if (uid !== 0) {
    return userNamespaces()
      ? { sandbox: true }
      : { sandbox: false, reason: 'the kernel does not allow this user to create user namespaces' };
  }
  if (!existsSync(SETPRIV))
    return { sandbox: false, reason: `running as root and ${SETPRIV} is missing to start the browser as another user` };
  const runAs = SANDBOX_ACCOUNTS.map(account).find((a) => a !== undefined && a.uid !== 0);
  if (!runAs)
    return { sandbox: false, reason: `running as root and no ${SANDBOX_ACCOUNTS.join(' or ')} account exists` };
  if (!userNamespaces(runAs))
    return { sandbox: false, reason: `the kernel does not allow ${runAs.name} to create user namespaces` };
  return { sandbox: true, runAs };
}

let cached: SandboxPlan | undefined;

/** detectSandbox(), once per process. */
export function sandboxPlan(): SandboxPlan {
  return (cached ??= detectSandbox());
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The executable Playwright should start: the browser itself, or (root with runAs) a wrapper in a private temporary
 * folder that gives the browser's profile folder to the account and drops to it. The folder is removed when the
 * process exits (a killed process leaves it: one 4 KB folder per process in the temporary directory).
 */
const launchers = new Map<string, string>();

export function launcherFor(executablePath: string, plan: SandboxPlan): string {
  if (!plan.runAs) return executablePath;
  const key = `${executablePath}\0${plan.runAs.uid}`;
  const known = launchers.get(key);
  if (known && existsSync(known)) return known;
  const { uid, gid } = plan.runAs;
  const dir = mkdtempSync(join(tmpdir(), 'exec-launcher-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'browser');
  writeFileSync(
    file,
    `#!/bin/sh
# Written by the exec monitor type (exec/sandbox.ts): starts the browser as uid ${uid} with its sandbox.
for a in "$@"; do
  case "$a" in --user-data-dir=*) d="\${a#--user-data-dir=}"; chown -R ${uid}:${gid} "$d"; export HOME="$d" XDG_CONFIG_HOME="$d" XDG_CACHE_HOME="$d";; esac
done
exec ${SETPRIV} --reuid=${uid} --regid=${gid} --clear-groups -- ${quote(executablePath)} "$@"
`,
    { mode: 0o700 },
  );
  chmodSync(file, 0o700);
  launchers.set(key, file);
  return file;
}
