/**
 * Every process from /proc/<pid>: pid, ppid, name, command line, user, state, CPU %, RSS, threads, open fds, start
 * time. Cost per process per sample: open + one read + close of /proc/<pid>/stat, parsed on its bytes, and one
 * stat() of /proc/<pid>/fd: its owner is the process's uid and, on Linux ≥ 6.2, its size is the fd count (older
 * kernels: a readdir). The
 * command line and user name are cached per process identity (pid + start time + comm + uid: an exec changes comm),
 * so they are read once in the life of a process; the per-pid record is updated in place between samples.
 *
 * CPU % is per core like top: 100 = one core fully busy; the delta of utime+stime between two samples, or the
 * lifetime average for a process first seen.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { CLK_TCK, PAGE_SIZE_BYTES, readProc, round2 } from './proc-read.js';
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

/**
 * parsePidStat on the raw bytes of /proc/<pid>/stat (no string split: the cycle reads one per process). The name is
 * between the first '(' and the LAST ')' (a name may contain ')' and spaces); fields after it are space-separated.
 */
export function parsePidStatBytes(buf: Buffer, len: number): StatFields | undefined {
  const open = buf.indexOf(0x28);
  let close = len - 1;
  while (close > open && buf[close] !== 0x29) close--;
  if (open < 0 || close <= open) return undefined;
  let state = '';
  let ppid = 0;
  let utime = 0;
  let stime = 0;
  let threads = 0;
  let startTicks = 0;
  let rssPages = 0;
  let field = 0;
  let n = 0;
  for (let i = close + 2; i <= len && field <= 21; i++) {
    const c = i < len ? buf[i]! : 0x20;
    if (c >= 0x30 && c <= 0x39) {
      n = n * 10 + (c - 0x30);
      continue;
    }
    if (c !== 0x20 && c !== 0x0a) {
      if (field === 0) state = String.fromCharCode(c);
      continue;
    }
    if (field === 1) ppid = n;
    else if (field === 11) utime = n;
    else if (field === 12) stime = n;
    else if (field === 17) threads = n;
    else if (field === 19) startTicks = n;
    else if (field === 21) rssPages = n;
    field++;
    n = 0;
  }
  if (field < 22) return undefined;
  return {
    name: buf.toString('utf8', open + 1, close),
    state,
    ppid,
    cpuTicks: utime + stime,
    threads,
    startTicks,
    rssBytes: rssPages * PAGE_SIZE_BYTES,
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

/** Linux ≥ 6.2 reports the number of open fds as the size of /proc/<pid>/fd: one stat() instead of a readdir. */
export function fdDirSizeIsCount(procRoot = '/proc'): boolean {
  try {
    return statSync(`${procRoot}/self/fd`).size > 0;
  } catch {
    return false;
  }
}

export function countFds(pid: number, procRoot = '/proc', sizeIsCount = false): number | null {
  try {
    return sizeIsCount ? statSync(`${procRoot}/${pid}/fd`).size : readdirSync(`${procRoot}/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** What is remembered per pid between samples; reused in place while the process keeps its identity. */
interface Identity {
  startTicks: number;
  name: string;
  cmdline: string;
  user: string;
  uid: number;
  cpuTicks: number;
  /** The sample number that last saw it (entries not seen in a sample are dropped). */
  seen: number;
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
  const buf = Buffer.allocUnsafe(4096);
  const bootMs = readBootTimeMs(root);
  const fdSize = fdDirSizeIsCount(root);
  const known = new Map<number, Identity>();
  let sampleNo = 0;
  let prevMs: number | undefined;

  /** /proc/<pid>/stat, in one read (the file is far smaller than the buffer), parsed on its bytes. */
  const readStat = (pid: number): StatFields | undefined => {
    let fd: number;
    try {
      fd = openSync(`${root}/${pid}/stat`, 'r');
    } catch {
      return undefined;
    }
    try {
      const len = readSync(fd, buf, 0, buf.length, null);
      return len > 0 && len < buf.length ? parsePidStatBytes(buf, len) : undefined;
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  };

  /**
   * The owner uid and the open fd count from one stat() of /proc/<pid>/fd (every /proc/<pid> entry is owned by the
   * process's uid; its size is the fd count on Linux ≥ 6.2). Older kernels: a readdir for the count.
   */
  const ownerAndFds = (pid: number, withFds: boolean): { uid: number; fds: number | null } | undefined => {
    try {
      const st = statSync(`${root}/${pid}/fd`);
      return { uid: st.uid, fds: !withFds ? null : fdSize ? st.size : countFds(pid, root) };
    } catch {
      // Not allowed to look at its fds (another user's process): the owner from /proc/<pid>, no fd count.
      try {
        return { uid: statSync(`${root}/${pid}`).uid, fds: null };
      } catch {
        return undefined;
      }
    }
  };

  const readOne = (pid: number, t: number, withFds: boolean, remember: boolean): ProcessInfo | undefined => {
    const s = readStat(pid);
    const o = s && ownerAndFds(pid, withFds);
    if (!s || !o) return undefined;
    const uid = o.uid;
    let id = known.get(pid);
    // Same process as last time (an exec changes comm, a new process has a new start time): reuse what doesn't change.
    const same = id !== undefined && id.startTicks === s.startTicks && id.name === s.name && id.uid === uid;
    const prevTicks = same ? id!.cpuTicks : undefined;
    if (!same)
      id = {
        startTicks: s.startTicks,
        name: s.name,
        cmdline: readCmdline(pid, s.name, root),
        user: users.name(uid),
        uid,
        cpuTicks: s.cpuTicks,
        seen: sampleNo,
      };
    const startTimeMs = bootMs + (s.startTicks * 1000) / CLK_TCK;
    const cpuMs = (s.cpuTicks * 1000) / CLK_TCK;
    let cpuPct: number;
    if (prevTicks !== undefined && prevMs !== undefined && t > prevMs)
      cpuPct = ((cpuMs - (prevTicks * 1000) / CLK_TCK) * 100) / (t - prevMs);
    else cpuPct = t > startTimeMs ? (cpuMs * 100) / (t - startTimeMs) : 0;
    if (remember) {
      id!.cpuTicks = s.cpuTicks;
      id!.seen = sampleNo;
      known.set(pid, id!);
    }
    return {
      pid,
      ppid: s.ppid,
      name: s.name,
      cmdline: id!.cmdline,
      uid,
      user: id!.user,
      state: s.state,
      cpuPct: round2(Math.max(0, cpuPct)),
      rssBytes: s.rssBytes,
      threads: s.threads,
      fds: o.fds,
      startTimeMs: Math.round(startTimeMs),
    };
  };

  return {
    sample(o = {}): ProcessInfo[] {
      const t = now();
      sampleNo++;
      const out: ProcessInfo[] = [];
      for (const pid of listPids(root)) {
        const p = readOne(pid, t, o.fds !== false, true);
        if (p) out.push(p);
      }
      for (const [pid, id] of known) if (id.seen !== sampleNo) known.delete(pid);
      prevMs = t;
      return out;
    },
    one(pid: number): ProcessInfo | undefined {
      // A live single read: CPU % against the last full sample when that sample knew this process.
      return readOne(pid, now(), true, false);
    },
  };
}
