/**
 * The first-start admin password when ADMIN_PASSWORD is not given: one 0600 file, `<DATA_DIR>/initial-admin-password`,
 * generated once and shared by both services. `initial-admin-password.users` lists the services whose `admin` still
 * has that password; when a service's admin password is changed (or the admin deleted) the service leaves the list,
 * and the last one to leave deletes both files (security §19). A file written by a version before the list existed
 * is assumed to be used by both services.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';

const SERVICES = ['monitor', 'agent'];
const files = (dataDir: string) => ({
  secret: path.join(dataDir, 'initial-admin-password'),
  users: path.join(dataDir, 'initial-admin-password.users'),
});

function readUsers(file: string): string[] | undefined {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function writeUsers(file: string, names: string[]): void {
  fs.writeFileSync(file, names.map((n) => `${n}\n`).join(''), { mode: 0o600 });
}

/** Reads (generating once) the shared password and records that `service`'s admin uses it. */
export function claimInitialPassword(dataDir: string, service: string): { password: string; generated: boolean } {
  const f = files(dataDir);
  let generated = true;
  try {
    fs.writeFileSync(f.secret, randomBytes(12).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    generated = false;
  }
  const names = readUsers(f.users) ?? [];
  if (!names.includes(service)) writeUsers(f.users, [...names, service]);
  return { password: fs.readFileSync(f.secret, 'utf8').trim(), generated };
}

/** True while `service`'s admin may still have the file's password. */
export function usesInitialPassword(dataDir: string, service: string): boolean {
  const f = files(dataDir);
  if (!fs.existsSync(f.secret)) return false;
  return (readUsers(f.users) ?? SERVICES).includes(service);
}

/** `service`'s admin no longer has the file's password; the last service to leave deletes the file. */
export function releaseInitialPassword(dataDir: string, service: string, log: Logger): void {
  const f = files(dataDir);
  if (!fs.existsSync(f.secret)) return;
  const left = (readUsers(f.users) ?? SERVICES).filter((n) => n !== service);
  if (left.length > 0) {
    writeUsers(f.users, left);
    return;
  }
  fs.rmSync(f.secret, { force: true });
  fs.rmSync(f.users, { force: true });
  log.info({ file: f.secret }, 'deleted the initial admin password file: no service uses it any more');
}
