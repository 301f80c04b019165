/**
 * A recording HTTP target for cluster tests and bench:cluster, run as a child process (its CPU is not the services'):
 * every `GET /m/<monitor name>` is recorded with its arrival time (Unix ms) under the monitor's name and answered
 * 200 'ok'. The parent steers it over stdin (one JSON command a line, one JSON answer a line, in order):
 * - `take`: the arrival times recorded since the last take, per name (and forgets them);
 * - `fail`: names answered 500 from now on (replaces the set);
 * - `hold`: requests for these names are not answered until `release` (a run left in flight on purpose);
 * - `release`: answers every held request with `status`, stops holding, and names the monitors it answered.
 * `startRecordingTarget()` starts the child (`node --import tsx <this file> --serve`) and gives the parent's handle.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export type Arrivals = Record<string, number[]>;

export interface RecordingTarget {
  child: ChildProcess;
  port: number;
  /** The URL a monitor named `name` should check. */
  urlFor(name: string): string;
  take(): Promise<Arrivals>;
  fail(names: readonly string[]): Promise<void>;
  hold(names: readonly string[]): Promise<void>;
  /** How many requests are held now. */
  held(): Promise<number>;
  release(status: number): Promise<string[]>;
  close(): void;
}

type Command =
  | { cmd: 'take' | 'held' }
  | { cmd: 'fail' | 'hold'; names: string[] }
  | { cmd: 'release'; status: number };

/** The child: serves and records until stdin closes. */
function serve(): void {
  let seen = new Map<string, number[]>();
  let failing = new Set<string>();
  let holding = new Set<string>();
  let held: Array<{ name: string; res: http.ServerResponse }> = [];
  const answer = (res: http.ServerResponse, status: number) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-length': '2', connection: 'close' });
    res.end(status === 200 ? 'ok' : 'no');
  };
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '').slice(3));
    let times = seen.get(name);
    if (!times) seen.set(name, (times = []));
    times.push(Date.now());
    if (holding.has(name)) held.push({ name, res });
    else answer(res, failing.has(name) ? 500 : 200);
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  const rl = readline.createInterface({ input: process.stdin });
  rl.on('line', (line) => {
    const c = JSON.parse(line) as Command;
    let reply: unknown = {};
    if (c.cmd === 'take') {
      reply = Object.fromEntries(seen);
      seen = new Map();
    } else if (c.cmd === 'fail') failing = new Set(c.names);
    else if (c.cmd === 'hold') holding = new Set(c.names);
    else if (c.cmd === 'held') reply = held.length;
    else if (c.cmd === 'release') {
      for (const h of held) answer(h.res, c.status);
      reply = held.map((h) => h.name);
      held = [];
      holding = new Set();
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
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
