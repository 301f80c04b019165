/**
 * The data folder is private to the service account (docs/security.md §11): folders 0700, files 0600. Both services
 * set `process.umask(0o077)` at start (run-main.ts), create what they write with these modes explicitly (for
 * embedders and tests that keep another umask), and at start walk DATA_DIR and tighten anything looser — files left
 * by an older version, a restore, a copy — logging every path changed. Symbolic links are neither followed nor
 * changed (their mode means nothing; the target may be a system file); other kinds (sockets, FIFOs) are left alone.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** The process umask both services run with: nothing they create is readable by group or others. */
export const SERVICE_UMASK = 0o077;

export interface ModeChange {
  path: string;
  /** The mode found, octal (`644`). */
  from: string;
  to: string;
}

export interface TightenResult {
  changed: ModeChange[];
  /** Paths whose mode could not be changed (another owner, a read-only mount), with the reason. */
  failed: Array<{ path: string; error: string }>;
}

const octal = (m: number): string => (m & 0o777).toString(8);

/**
 * Sets folders under (and including) `root` to 0700 and regular files to 0600 where group or others have any bit
 * (a stricter mode the owner chose, 0400 say, is kept).
 */
export function tightenModes(root: string): TightenResult {
  const out: TightenResult = { changed: [], failed: [] };
  const visit = (p: string): void => {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      return; // gone meanwhile (the other service rotating or sweeping)
    }
    const want = st.isDirectory() ? PRIVATE_DIR_MODE : st.isFile() ? PRIVATE_FILE_MODE : undefined;
    if (want !== undefined && (st.mode & 0o077) !== 0) {
      try {
        fs.chmodSync(p, want);
        out.changed.push({ path: p, from: octal(st.mode), to: octal(want) });
      } catch (e) {
        out.failed.push({ path: p, error: (e as NodeJS.ErrnoException).code ?? String(e) });
      }
    }
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = fs.readdirSync(p);
    } catch {
      return;
    }
    for (const n of names) visit(path.join(p, n));
  };
  visit(path.resolve(root));
  return out;
}

/** `mkdir -p` with 0700 for every folder it creates (the mode of existing ones is the walk's business). */
export function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}
