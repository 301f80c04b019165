/** /proc readers for the browser pool: find a launched browser by a marker argument, and the RSS of its tree. */
import { readdirSync, readFileSync } from 'node:fs';

function readStat(pid: number): { ppid: number; rssPages: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after "(comm)": state(0) ppid(1) ... rss is field 24 overall → index 21 here.
    return { ppid: Number(rest[1]), rssPages: Number(rest[21]) };
  } catch {
    return undefined;
  }
}

function allPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
}

/** The pid of the process whose command line contains `marker`, among the children of this process. */
export function findChildPidByArg(marker: string): number | undefined {
  for (const pid of allPids()) {
    const st = readStat(pid);
    if (!st || st.ppid !== process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) return pid;
    } catch {
      /* exited */
    }
  }
  return undefined;
}

/** Resident memory of `pid` and all its descendants, bytes (0 when unknown). */
export function treeRssBytes(pid: number | undefined): number {
  if (!pid) return 0;
  const parents = new Map<number, { ppid: number; rssPages: number }>();
  for (const p of allPids()) {
    const st = readStat(p);
    if (st) parents.set(p, st);
  }
  const inTree = new Set<number>([pid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [p, st] of parents) {
      if (!inTree.has(p) && inTree.has(st.ppid)) {
        inTree.add(p);
        grew = true;
      }
    }
  }
  let pages = 0;
  for (const p of inTree) pages += parents.get(p)?.rssPages ?? 0;
  return pages * 4096;
}
