/**
 * Every process from /proc/<pid>: pid, ppid, name, command line, user, state, CPU %, RSS, threads, open fds, start
 * time. Cost per process per sample: one read of /proc/<pid>/stat, one stat() of /proc/<pid> (uid), one readdir of
 * /proc/<pid>/fd (fd count). The command line and user name are cached per process identity (pid + start time +
 * comm: an exec changes comm), so they are read once in the life of a process.
 *
 * CPU % is per core like top: 100 = one core fully busy; the delta of utime+stime between two samples, or the
 * lifetime average for a process first seen.
 */
import { readdirSync, statSync } from 'node:fs';
import { CLK_TCK, PAGE_SIZE_BYTES, createProcReader, readProc, round2 } from './proc-read.js';
import { createUserResolver, type UserResolver } from './users.js';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** comm (up to 15 chars, the kernel's name). */
  name: string;
  /** Arguments joined by spaces; `[name]` for kernel threads (no command line). */
  cmdline: string;
  uid: number;
  user: string;
  /** One letter: R running, S sleeping, D disk wait, Z zombie, T stopped, I idle... */
  state: string;
  cpuPct: number;
  rssBytes: number;
  threads: number;
  /** Open file descriptors; null when /proc/<pid>/fd is not readable (another user's process, not root). */
  fds: number | null;
  startTimeMs: number;
}

/** Fields of /proc/<pid>/stat the readers need. */
export interface StatFields {
  name: string;
  state: string;
  ppid: number;
  cpuTicks: number;
  threads: number;
  startTicks: number;
  rssBytes: number;
}

export function parsePidStat(text: string): StatFields | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const f = text.slice(close + 2).split(' ');
  if (f.length < 22) return undefined;
  return {
    name: text.slice(open + 1, close),
    state: f[0]!,
    ppid: Number(f[1]),
    cpuTicks: Number(f[11]) + Number(f[12]),
    threads: Number(f[17]),
    startTicks: Number(f[19]),
    rssBytes: Number(f[21]) * PAGE_SIZE_BYTES,
  };
}

export function readBootTimeMs(procRoot = '/proc'): number {
  const m = /^btime (\d+)$/m.exec(readProc(`${procRoot}/stat`) ?? '');
  return m ? Number(m[1]) * 1000 : 0;
}

export function listPids(procRoot = '/proc'): number[] {
  const pids: number[] = [];
  for (const n of readdirSync(procRoot)) {
    const c = n.charCodeAt(0);
    if (c >= 48 && c <= 57) pids.push(Number(n));
  }
  return pids;
}

export function readCmdline(pid: number, name: string, procRoot = '/proc'): string {
  const raw = readProc(`${procRoot}/${pid}/cmdline`);
  if (!raw) return `[${name}]`;
  return raw.replace(/\0+$/, '').replaceAll('\0', ' ');
}

export function countFds(pid: number, procRoot = '/proc'): number | null {
  try {
    return readdirSync(`${procRoot}/${pid}/fd`).length;
  } catch {
    return null;
  }
}

interface Identity {
  key: string;
  cmdline: string;
  cpuTicks: number;
}

export interface ProcessSampler {
  /** All processes now; CPU % since the previous sample. */
  sample(opts?: { fds?: boolean }): ProcessInfo[];
  /** One process now (CPU % since the previous sample of it, else lifetime average); undefined when gone. */
  one(pid: number): ProcessInfo | undefined;
}

export function createProcessSampler(
  opts: { procRoot?: string; users?: UserResolver; now?: () => number } = {},
): ProcessSampler {
  const root = opts.procRoot ?? '/proc';
  const now = opts.now ?? Date.now;
  const users = opts.users ?? createUserResolver();
  const reader = createProcReader(4096);
  const bootMs = readBootTimeMs(root);
  let known = new Map<number, Identity>();
  let prevMs: number | undefined;

  const readOne = (pid: number, t: number, withFds: boolean, next: Map<number, Identity>): ProcessInfo | undefined => {
    const text = reader.read(`${root}/${pid}/stat`);
    const s = text === undefined ? undefined : parsePidStat(text);
    if (!s) return undefined;
    let uid = 0;
    try {
      uid = statSync(`${root}/${pid}`).uid;
    } catch {
      return undefined;
    }
    const key = `${s.startTicks}:${s.name}`;
    const prev = known.get(pid);
    const same = prev !== undefined && prev.key === key;
    const cmdline = same ? prev.cmdline : readCmdline(pid, s.name, root);
    const startTimeMs = bootMs + (s.startTicks * 1000) / CLK_TCK;
    const cpuMs = (s.cpuTicks * 1000) / CLK_TCK;
    let cpuPct: number;
    if (same && prevMs !== undefined && t > prevMs) cpuPct = ((cpuMs - (prev.cpuTicks * 1000) / CLK_TCK) * 100) / (t - prevMs);
    else cpuPct = t > startTimeMs ? (cpuMs * 100) / (t - startTimeMs) : 0;
    next.set(pid, { key, cmdline, cpuTicks: s.cpuTicks });
    return {
      pid,
      ppid: s.ppid,
      name: s.name,
      cmdline,
      uid,
      user: users.name(uid),
      state: s.state,
      cpuPct: round2(Math.max(0, cpuPct)),
      rssBytes: s.rssBytes,
      threads: s.threads,
      fds: withFds ? countFds(pid, root) : null,
      startTimeMs: Math.round(startTimeMs),
    };
  };

  return {
    sample(o = {}): ProcessInfo[] {
      const t = now();
      const next = new Map<number, Identity>();
      const out: ProcessInfo[] = [];
      for (const pid of listPids(root)) {
        const p = readOne(pid, t, o.fds !== false, next);
        if (p) out.push(p);
      }
      known = next;
      prevMs = t;
      return out;
    },
    one(pid: number): ProcessInfo | undefined {
      // A live single read: CPU % against the last full sample when that sample knew this process.
      return readOne(pid, now(), true, new Map());
    },
  };
}
