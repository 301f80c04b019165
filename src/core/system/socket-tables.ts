/**
 * The socket tables as a discovery cycle reads them: one pass over each /proc/net table, on its bytes, yielding the
 * listening sockets and the established TCP connections per local port.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { readProc } from './proc-read.js';
import { isListener, parseNetSockets, TCP_ESTABLISHED, TCP_LISTEN, type SocketEntry } from './sockets.js';

/**
 * Reads a /proc/net table into `buf` (reused; grown when a line doesn't fit) and calls `onLine(start, end)` for each
 * data line, on the bytes, until it returns false. Returns the buffer (possibly grown) for the caller to keep.
 */
export function scanTableBytes(
  path: string,
  buf: Buffer,
  onLine: (b: Buffer, start: number, end: number) => boolean,
): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return buf;
  }
  let have = 0;
  let header = true;
  try {
    for (;;) {
      if (have === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const n = readSync(fd, buf, have, buf.length - have, null);
      const end = have + Math.max(0, n);
      let ls = 0;
      for (;;) {
        let nl = buf.indexOf(0x0a, ls);
        if (nl < 0 || nl >= end) {
          if (n > 0 || ls >= end) break;
          nl = end; // the last line without a newline
        }
        if (header) header = false;
        else if (nl > ls && !onLine(buf, ls, nl)) return buf;
        ls = nl + 1;
      }
      if (n <= 0) break;
      buf.copy(buf, 0, ls, end);
      have = end - ls;
    }
  } finally {
    closeSync(fd);
  }
  return buf;
}

function hexAt(b: Buffer, i: number, digits: number): number {
  let v = 0;
  for (let k = 0; k < digits; k++) {
    const c = b[i + k]!;
    v = v * 16 + (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x57);
  }
  return v;
}

export interface SocketTables {
  /** Listening TCP sockets and unconnected UDP sockets (not yet resolved to owners). */
  listeners: SocketEntry[];
  /** Local port → established TCP connections. */
  established: Map<number, number>;
}

/**
 * What a discovery cycle needs from the socket tables in one pass over each: the listening sockets (full entries)
 * and the established TCP connections per local port (counted on the bytes, no string per line). On a host with
 * tens of thousands of TIME_WAIT sockets most of the cost is the kernel generating /proc/net/tcp; this keeps the
 * user-space part to a byte scan. Keep the scanner (its buffer is reused).
 */
export function createSocketTableScanner(opts: { procRoot?: string } = {}): { scan(): SocketTables } {
  const root = opts.procRoot ?? '/proc';
  let buf: Buffer = Buffer.allocUnsafe(256 * 1024);
  return {
    scan(): SocketTables {
      const listeners: SocketEntry[] = [];
      const established = new Map<number, number>();
      for (const proto of ['tcp', 'tcp6'] as const) {
        const addrLen = proto === 'tcp6' ? 32 : 8;
        buf = scanTableBytes(`${root}/net/${proto}`, buf, (b, start, end) => {
          const c = b.indexOf(0x3a, start);
          const lport = c + 2 + addrLen + 1;
          const stateAt = lport + 4 + 1 + addrLen + 1 + 4 + 1;
          if (c < 0 || stateAt + 2 > end) return true;
          const st = hexAt(b, stateAt, 2);
          if (st === TCP_ESTABLISHED) {
            const port = hexAt(b, lport, 4);
            established.set(port, (established.get(port) ?? 0) + 1);
          } else if (st === TCP_LISTEN) {
            const e = parseNetSockets(`h\n${b.toString('latin1', start, end)}`, proto)[0];
            if (e) listeners.push(e);
          }
          return true;
        });
      }
      for (const proto of ['udp', 'udp6'] as const) {
        for (const e of parseNetSockets(readProc(`${root}/net/${proto}`) ?? '', proto))
          if (isListener(e)) listeners.push(e);
      }
      return { listeners, established };
    },
  };
}
