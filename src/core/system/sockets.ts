/**
 * TCP/UDP sockets from /proc/net/{tcp,tcp6,udp,udp6}: listeners with their owning process, and established
 * connections counted per local port. The owner of a socket is found through its inode: /proc/<pid>/fd/<n> links to
 * `socket:[inode]`. Walking every fd of every process is the expensive part, so the resolver remembers where each
 * inode was found (pid + fd) and re-checks that one link (one readlink) next time; only unknown inodes trigger a walk,
 * which goes newest pid first (a new listener usually belongs to a new process) and stops once all are found. Inodes
 * no walk could find (sockets of another network namespace's process, kernel sockets) are not walked for again
 * during `negativeTtlMs`.
 */
import { closeSync, openSync, readdirSync, readlinkSync, readSync } from 'node:fs';
import { readProc } from './proc-read.js';
import { listPids } from './processes.js';

export type SocketProto = 'tcp' | 'tcp6' | 'udp' | 'udp6';

export interface SocketEntry {
  proto: SocketProto;
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
  /** Kernel state number (TCP: 1 ESTABLISHED, 10 LISTEN; UDP: 7 unconnected, 1 connected). */
  state: number;
  uid: number;
  inode: number;
}

export const TCP_ESTABLISHED = 1;
export const TCP_LISTEN = 10;
export const UDP_UNCONNECTED = 7;

function hexToIpv4(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return `${n & 255}.${(n >>> 8) & 255}.${(n >>> 16) & 255}.${n >>> 24}`;
}

function hexToIpv6(hex: string): string {
  // Four 32-bit words, each in host (little-endian) order.
  const bytes: number[] = [];
  for (let w = 0; w < 4; w++) {
    const word = hex.slice(w * 8, w * 8 + 8);
    for (let b = 3; b >= 0; b--) bytes.push(Number.parseInt(word.slice(b * 2, b * 2 + 2), 16));
  }
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  return formatIpv6(groups);
}

/** RFC 5952 text: lower-case hex, the longest run (≥ 2) of zero groups as `::`. */
export function formatIpv6(groups: number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

function parseAddr(s: string, v6: boolean): [string, number] {
  const [a, p] = s.split(':');
  return [v6 ? hexToIpv6(a ?? '') : hexToIpv4(a ?? '0'), Number.parseInt(p ?? '0', 16)];
}

export function parseNetSockets(text: string, proto: SocketProto): SocketEntry[] {
  const v6 = proto.endsWith('6');
  const out: SocketEntry[] = [];
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i]!.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [localAddress, localPort] = parseAddr(f[1]!, v6);
    const [remoteAddress, remotePort] = parseAddr(f[2]!, v6);
    out.push({
      proto,
      localAddress,
      localPort,
      remoteAddress,
      remotePort,
      state: Number.parseInt(f[3]!, 16),
      uid: Number(f[7]),
      inode: Number(f[9]),
    });
  }
  return out;
}

export function readSockets(protos: SocketProto[] = ['tcp', 'tcp6', 'udp', 'udp6'], procRoot = '/proc'): SocketEntry[] {
  const out: SocketEntry[] = [];
  for (const p of protos) out.push(...parseNetSockets(readProc(`${procRoot}/net/${p}`) ?? '', p));
  return out;
}

/**
 * Streams the data lines of a /proc/net table to `fn` until it returns false. Reading stops there, so the kernel
 * doesn't generate the rest of the table (with tens of thousands of connections that is most of the cost).
 */
export function scanNetTable(path: string, fn: (line: string) => boolean, chunkBytes = 64 * 1024): void {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return;
  }
  const buf = Buffer.allocUnsafe(chunkBytes);
  let rest = '';
  let header = true;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      const lines = (rest + buf.toString('latin1', 0, n)).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (header) {
          header = false;
          continue;
        }
        if (line.length > 0 && !fn(line)) return;
      }
    }
    if (rest.length > 0 && !header) fn(rest);
  } finally {
    closeSync(fd);
  }
}

/** Local port and state of a table line, read at the fixed offsets the kernel prints them at. */
function portAndState(line: string): [number, number] {
  const c = line.indexOf(':');
  const local = c + 2; // "  sl: <local hex>:<port> <remote>:<port> <st>"
  const colon = line.indexOf(':', local);
  const port = Number.parseInt(line.slice(colon + 1, colon + 5), 16);
  const remoteColon = line.indexOf(':', colon + 6);
  const state = Number.parseInt(line.slice(remoteColon + 6, remoteColon + 8), 16);
  return [port, state];
}

/**
 * Listening sockets only. The kernel prints a TCP table's listening hash before the established one, so a TCP scan
 * stops at the first line that is not LISTEN; UDP tables (small, unordered) are read whole.
 */
export function readListenerSockets(
  protos: SocketProto[] = ['tcp', 'tcp6', 'udp', 'udp6'],
  procRoot = '/proc',
  port?: number,
): SocketEntry[] {
  const out: SocketEntry[] = [];
  for (const proto of protos) {
    const tcp = proto.startsWith('tcp');
    scanNetTable(
      `${procRoot}/net/${proto}`,
      (line) => {
        const [p, st] = portAndState(line);
        if (tcp && st !== TCP_LISTEN) return false;
        if (port !== undefined && p !== port) return true;
        const e = parseNetSockets(`h\n${line}`, proto)[0];
        if (e && isListener(e)) out.push(e);
        return true;
      },
      tcp ? 4096 : 64 * 1024,
    );
  }
  return out;
}

/** Established TCP connections per local port, counted without parsing whole lines. */
export function countEstablished(procRoot = '/proc'): Map<number, number> {
  const m = new Map<number, number>();
  for (const proto of ['tcp', 'tcp6']) {
    scanNetTable(`${procRoot}/net/${proto}`, (line) => {
      const [p, st] = portAndState(line);
      if (st === TCP_ESTABLISHED) m.set(p, (m.get(p) ?? 0) + 1);
      return true;
    });
  }
  return m;
}

export function isListener(s: SocketEntry): boolean {
  return s.proto.startsWith('tcp') ? s.state === TCP_LISTEN : s.state === UDP_UNCONNECTED && s.remotePort === 0;
}

/** Established TCP connections per local port. */
export function establishedPerPort(sockets: SocketEntry[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const s of sockets) {
    if (s.proto.startsWith('tcp') && s.state === TCP_ESTABLISHED) m.set(s.localPort, (m.get(s.localPort) ?? 0) + 1);
  }
  return m;
}

export interface SocketOwnerResolver {
  /** inode → pid for every inode that could be found (inode 0, a socket being torn down, is never looked up). */
  resolve(inodes: Iterable<number>): Map<number, number>;
  /** The pid still holding a socket found before (one readlink), or undefined (closed, never found). */
  recheck(inode: number): number | undefined;
  /** Counters for tests and the bench: readlinks done and full walks started since creation. */
  readonly stats: { readlinks: number; walks: number };
}

export function createSocketOwnerResolver(
  opts: { procRoot?: string; negativeTtlMs?: number; now?: () => number } = {},
): SocketOwnerResolver {
  const root = opts.procRoot ?? '/proc';
  const now = opts.now ?? Date.now;
  const where = new Map<number, { pid: number; fd: string }>();
  const missing = new Map<number, number>();
  const stats = { readlinks: 0, walks: 0 };
  const link = (pid: number, fd: string): string | undefined => {
    stats.readlinks++;
    try {
      return readlinkSync(`${root}/${pid}/fd/${fd}`);
    } catch {
      return undefined;
    }
  };

  const walk = (wanted: Set<number>, found: Map<number, number>): void => {
    stats.walks++;
    const pids = listPids(root).sort((a, b) => b - a);
    for (const pid of pids) {
      let fds: string[];
      try {
        fds = readdirSync(`${root}/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        const l = link(pid, fd);
        if (l === undefined || !l.startsWith('socket:[')) continue;
        const inode = Number(l.slice(8, -1));
        if (!wanted.has(inode)) continue;
        wanted.delete(inode);
        found.set(inode, pid);
        where.set(inode, { pid, fd });
        if (wanted.size === 0) return;
      }
    }
  };

  return {
    stats,
    recheck(inode: number): number | undefined {
      const w = where.get(inode);
      return w && link(w.pid, w.fd) === `socket:[${inode}]` ? w.pid : undefined;
    },
    resolve(inodes: Iterable<number>): Map<number, number> {
      const found = new Map<number, number>();
      const wanted = new Set<number>();
      const t = now();
      for (const inode of inodes) {
        if (inode === 0 || found.has(inode)) continue;
        const w = where.get(inode);
        if (w && link(w.pid, w.fd) === `socket:[${inode}]`) {
          found.set(inode, w.pid);
          continue;
        }
        where.delete(inode);
        const missSince = missing.get(inode);
        if (missSince !== undefined && t - missSince < (opts.negativeTtlMs ?? 60_000)) continue;
        wanted.add(inode);
      }
      if (wanted.size > 0) walk(wanted, found);
      for (const inode of wanted) missing.set(inode, t);
      for (const [inode, since] of missing) if (t - since >= (opts.negativeTtlMs ?? 60_000) * 2) missing.delete(inode);
      return found;
    },
  };
}

export interface Listener extends SocketEntry {
  pid: number | null;
}

/** Every listening socket with its owner pid (null when not found). */
export function listListeners(resolver: SocketOwnerResolver, sockets: SocketEntry[]): Listener[] {
  const listeners = sockets.filter(isListener);
  const owners = resolver.resolve(listeners.map((l) => l.inode));
  return listeners.map((l) => ({ ...l, pid: owners.get(l.inode) ?? null }));
}
