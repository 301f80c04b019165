/** uid → user name via /etc/passwd, cached; the file is re-read (at most once per `minReloadMs`) on an unknown uid. */
import { readFileSync } from 'node:fs';

export interface UserResolver {
  name(uid: number): string;
}

export function parsePasswd(text: string): Map<number, string> {
  const m = new Map<number, string>();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 3 || !f[0]) continue;
    const uid = Number(f[2]);
    if (Number.isInteger(uid) && !m.has(uid)) m.set(uid, f[0]);
  }
  return m;
}

export function createUserResolver(
  opts: { passwdPath?: string; minReloadMs?: number; now?: () => number } = {},
): UserResolver {
  const path = opts.passwdPath ?? '/etc/passwd';
  const now = opts.now ?? Date.now;
  let byUid = new Map<number, string>();
  let loadedMs = -Infinity;
  const load = (): void => {
    loadedMs = now();
    try {
      byUid = parsePasswd(readFileSync(path, 'utf8'));
    } catch {
      byUid = new Map();
    }
  };
  return {
    name(uid: number): string {
      let n = byUid.get(uid);
      if (n === undefined && now() - loadedMs >= (opts.minReloadMs ?? 30_000)) {
        load();
        n = byUid.get(uid);
      }
      return n ?? String(uid);
    },
  };
}
