/**
 * A recording HTTP target for cluster tests and bench:cluster, run as a child process (its CPU is not the services'):
 * every `GET /m/<monitor name>` is recorded with its arrival time (Unix ms) under the monitor's name and answered
 * 200 'ok'. The parent steers it over stdin (one JSON command a line, one JSON answer a line, in order):
 * - `take`: the arrival times recorded since the last take (or runs), per name (and forgets them);
 * - `runs`: the same records in full (and forgets them): arrival, when the target accepted the request's connection,
 *   and, while attributing, the pid of the process that sent it;
 * - `attribute`: from now on, find which of these pids sent each request (an empty list turns it off);
 * - `fail`: names answered 500 from now on (replaces the set);
 * - `hold`: requests for these names are not answered until `release` (a run left in flight on purpose);
 * - `release`: answers every held request with `status`, stops holding, and names the monitors it answered.
 * Attribution (Linux): a check connects from 127.0.0.1 with an ephemeral port over a fresh connection that stays
 * open until answered, so before answering the target finds the client end's socket inode in /proc/net/tcp (local
 * 127.0.0.1:<client port>, remote 127.0.0.1:<target port>, established) and the pid whose /proc/<pid>/fd links to
 * `socket:[inode]`. The requests that came in since the last look-up share one, at most one per PASS_GAP_MS; a request is
 * recorded once its look-up is done (a take in between finds it in the next one), with the arrival time of when it
 * came in.
 * `startRecordingTarget()` starts the child (`node --import tsx <this file> --serve`) and gives the parent's handle.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export type Arrivals = Record<string, number[]>;

/** One request the target saw. */
export interface Arrival {
  /** When the request came in (Unix ms, the target's clock). */
  atMs: number;
  /** When the target accepted the request's connection (Unix ms; a check opens a fresh connection per request). */
  connectedMs: number;
  /** While attributing: the pid (of those given) that owns the client end of the connection; absent if none. */
  pid?: number;
}

export type Runs = Record<string, Arrival[]>;

export interface RecordingTarget {
  child: ChildProcess;
  port: number;
  /** The URL a monitor named `name` should check. */
  urlFor(name: string): string;
  take(): Promise<Arrivals>;
  /** What `take` gives, in full. */
  runs(): Promise<Runs>;
  /** Attribute each request to one of `pids` from now on (Linux /proc; [] turns it off). */
  attribute(pids: readonly number[]): Promise<void>;
  fail(names: readonly string[]): Promise<void>;
  hold(names: readonly string[]): Promise<void>;
  /** How many requests are held now. */
  held(): Promise<number>;
  release(status: number): Promise<string[]>;
  close(): void;
}

type Command =
  | { cmd: 'take' | 'runs' | 'held' }
  | { cmd: 'fail' | 'hold'; names: string[] }
  | { cmd: 'attribute'; pids: number[] }
  | { cmd: 'release'; status: number };

/** `socket:[inode]` → pid, over the open fds of `pids` (a pid that is gone is skipped). */
function socketOwners(pids: readonly number[]): Map<string, number> {
  const owners = new Map<string, number>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link.startsWith('socket:[')) owners.set(link.slice(8, -1), pid);
      } catch {
        // closed since readdir
      }
    }
  }
  return owners;
}

const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * The inode of each established client socket 127.0.0.1:<port> → 127.0.0.1:<targetPort> in /proc/net/tcp
 * (columns: sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode).
 */
function clientInodes(ports: readonly number[], targetPort: number): Map<number, string> {
  const wanted = new Map(ports.map((p) => [`0100007F:${hexPort(p)}`, p]));
  const remote = `0100007F:${hexPort(targetPort)}`;
  const found = new Map<number, string>();
  for (const line of fs.readFileSync('/proc/net/tcp', 'latin1').split('\n')) {
    const f = line.trim().split(/\s+/);
    const port = wanted.get(f[1] ?? '');
    if (port !== undefined && f[2] === remote && f[3] === '01' && f[9] !== '0') found.set(port, f[9]!);
  }
  return found;
}

/**
 * The least time between two /proc passes. A pass reads the machine's whole TCP table, TIME_WAIT sockets included:
 * 15–18 ms for the ~3,000 that 50 checks a second leave behind, on a slow machine (measured 2026-11-28). One pass per
 * request, as the requests came in one at a time, cost the target 534–636 ms of CPU a second in the cluster proof's
 * step 3 on a quiet machine; in a clean-clone CI run beside another test file the target fell so far behind that
 * checks timed out and closed their connections before they were looked up. At most 5 passes a second: 112–126 ms.
 * A request waits at most this long for its look-up, far below a check's timeout.
 */
const PASS_GAP_MS = 200;

/** Looks up the sending pid of client ports, one /proc pass for all the requests that came in since the last. */
function createAttributor(targetPort: () => number) {
  let pids: number[] = [];
  let waiting: Array<{ port: number; done: (pid: number | undefined) => void }> = [];
  let lastPassMs = -Infinity;
  const flush = () => {
    lastPassMs = performance.now();
    const batch = waiting;
    waiting = [];
    let inodes = new Map<number, string>();
    let owners = new Map<string, number>();
    try {
      inodes = clientInodes(
        batch.map((w) => w.port),
        targetPort(),
      );
      owners = socketOwners(pids);
    } catch {
      // no /proc: nothing attributed
    }
    for (const w of batch) w.done(owners.get(inodes.get(w.port) ?? ''));
  };
  return {
    set: (p: readonly number[]) => void (pids = [...p]),
    /** The pid that sent from `port`, or undefined (also when not attributing, at once). */
    lookup: (port: number | undefined): Promise<number | undefined> => {
      if (pids.length === 0 || port === undefined) return Promise.resolve(undefined);
      if (waiting.length === 0) setTimeout(flush, Math.max(0, lastPassMs + PASS_GAP_MS - performance.now()));
      return new Promise((done) => waiting.push({ port, done }));
    },
  };
}

const CONNECTED = Symbol('connectedMs');
type TimedSocket = Socket & { [CONNECTED]?: number };

interface TargetState {
  seen: Map<string, Arrival[]>;
  failing: Set<string>;
  holding: Set<string>;
  held: Array<{ name: string; res: http.ServerResponse }>;
}

function answer(res: http.ServerResponse, status: number): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-length': '2', connection: 'close' });
  res.end(status === 200 ? 'ok' : 'no');
}

/** Applies one command of the parent; resolves the reply. */
function command(s: TargetState, c: Command, attributor: ReturnType<typeof createAttributor>): unknown {
  const taken = () => {
    const all = Object.fromEntries(s.seen);
    s.seen = new Map();
    return all;
  };
  switch (c.cmd) {
    case 'take':
      return Object.fromEntries(Object.entries(taken()).map(([k, v]) => [k, v.map((a) => a.atMs)]));
    case 'runs':
      return taken();
    case 'attribute':
      attributor.set(c.pids);
      return {};
    case 'fail':
      s.failing = new Set(c.names);
      return {};
    case 'hold':
      s.holding = new Set(c.names);
      return {};
    case 'held':
      return s.held.length;
    case 'release': {
      for (const h of s.held) answer(h.res, c.status);
      const names = s.held.map((h) => h.name);
      s.held = [];
      s.holding = new Set();
      return names;
    }
  }
}

/** The child: serves and records until stdin closes. */
function serve(): void {
  const s: TargetState = { seen: new Map(), failing: new Set(), holding: new Set(), held: [] };
  const server = http.createServer();
  const attributor = createAttributor(() => (server.address() as AddressInfo).port);
  server.on('connection', (socket: TimedSocket) => void (socket[CONNECTED] = Date.now()));
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const atMs = Date.now();
    const name = decodeURIComponent((req.url ?? '').slice(3));
    const connectedMs = (req.socket as TimedSocket)[CONNECTED] ?? atMs;
    // Looked up before answering: the client end must still be open.
    void attributor.lookup(req.socket.remotePort).then((pid) => {
      let runs = s.seen.get(name);
      if (!runs) s.seen.set(name, (runs = []));
      runs.push(pid === undefined ? { atMs, connectedMs } : { atMs, connectedMs, pid });
      if (s.holding.has(name)) s.held.push({ name, res });
      else answer(res, s.failing.has(name) ? 500 : 200);
    });
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    process.stdout.write(`${JSON.stringify(command(s, JSON.parse(line) as Command, attributor))}\n`);
  });
  rl.on('close', () => process.exit(0));
}

export async function startRecordingTarget(): Promise<RecordingTarget> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, sig) => reject(new Error(`recording target exited (${code ?? sig})`))),
  );
  exited.catch(() => undefined);
  const port = Number(await Promise.race([next(), exited]));
  // Commands are answered in order: each one queues its reader before writing.
  const send = async <T>(c: Command): Promise<T> => {
    const reply = next();
    child.stdin.write(`${JSON.stringify(c)}\n`);
    return JSON.parse(await Promise.race([reply, exited])) as T;
  };
  return {
    child,
    port,
    urlFor: (name) => `http://127.0.0.1:${port}/m/${encodeURIComponent(name)}`,
    take: () => send<Arrivals>({ cmd: 'take' }),
    runs: () => send<Runs>({ cmd: 'runs' }),
    attribute: async (pids) => void (await send({ cmd: 'attribute', pids: [...pids] })),
    fail: async (names) => void (await send({ cmd: 'fail', names: [...names] })),
    hold: async (names) => void (await send({ cmd: 'hold', names: [...names] })),
    held: () => send<number>({ cmd: 'held' }),
    release: (status) => send<string[]>({ cmd: 'release', status }),
    close: () => {
      child.stdin.end();
      child.kill();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--serve')) serve();
