/**
 * GET /getProcessByPort/{port}: the process listening on a TCP port, read live (not from the last cycle): the TCP
 * tables for the port's LISTEN sockets, then the socket owner (cached inode → pid, one readlink when known), then
 * that one process's /proc files. 400 outside 1–65535; 404 when nothing listens. cpuPct: since the last cycle's
 * sample of that process, else its lifetime average (100 = one core).
 *
 * Reading the TCP table costs milliseconds of kernel time on a host with many connections, so a port's last answer
 * is remembered (listening socket inode + owner) and re-validated live with one readlink: the owner still holds that
 * listening socket (a listening socket stays listening until closed). When it doesn't, the table is read again.
 */
import { AppError } from '../../core/errors.js';
import { readMemory } from '../../core/system/memory.js';
import type { ProcessInfo, ProcessSampler } from '../../core/system/processes.js';
import { readListenerSockets, type SocketOwnerResolver } from '../../core/system/sockets.js';
import { round2 } from '../../core/system/proc-read.js';

export interface PortOwner extends Omit<Partial<ProcessInfo>, 'pid'> {
  port: number;
  /** Addresses the port listens on (0.0.0.0, ::, 127.0.0.1...). */
  listenAddresses: string[];
  pid: number | null;
  memPct?: number;
}

export function parsePortParam(raw: string): number {
  const n = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw AppError.badRequest('port must be an integer 1–65535', 'params.port');
  return n;
}

export function createProcessByPort(deps: {
  resolver: SocketOwnerResolver;
  processes: ProcessSampler;
  procRoot?: string;
}) {
  const known = new Map<number, { inode: number; listenAddresses: string[] }>();
  const answer = (port: number, listenAddresses: string[], pid: number): PortOwner | undefined => {
    const p = deps.processes.one(pid);
    if (!p) return undefined;
    const total = readMemory(deps.procRoot).totalBytes;
    return { port, listenAddresses, ...p, memPct: total > 0 ? round2((p.rssBytes * 100) / total) : 0 };
  };
  return function lookup(port: number): PortOwner {
    const k = known.get(port);
    const pid = k && deps.resolver.recheck(k.inode);
    const fast = k && pid !== undefined ? answer(port, k.listenAddresses, pid) : undefined;
    if (fast) return fast;
    known.delete(port);
    const listeners = readListenerSockets(['tcp', 'tcp6'], deps.procRoot, port);
    if (listeners.length === 0) throw AppError.notFound(`nothing listens on TCP port ${port}`);
    const owners = deps.resolver.resolve(listeners.map((l) => l.inode));
    const listenAddresses = [...new Set(listeners.map((l) => l.localAddress))];
    for (const l of listeners) {
      const pid = owners.get(l.inode);
      if (pid === undefined) continue;
      const a = answer(port, listenAddresses, pid);
      if (!a) continue;
      known.set(port, { inode: l.inode, listenAddresses });
      return a;
    }
    return { port, listenAddresses, pid: null };
  };
}
