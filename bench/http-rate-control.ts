/**
 * Benches only: what this machine charges a plain Node.js process for the same HTTP work at different rates — the
 * control for bench:cluster's per-instance figure. A child process (no code of ours: node:http, a new connection per
 * request, requests started every 100 ms as the scheduler dispatches) GETs a local server in another child at each
 * rate; the figure is the client's CPU (user + system, all threads) per completed request.
 *
 * Why it exists (docs/scale.md "What the machine charges"): on the development VM a process that waits for the
 * network pays a large fixed CPU cost per wake-up, so the same request costs up to ~3× as much CPU in a process doing a
 * third as many per second. A cluster member runs a third of the checks, so its checks per CPU-second are bounded by
 * this ratio whatever the monitor service does; the control measures the bound in the same run.
 *
 * Run as a script with `client <port> <rate> <warmS> <measureS>` or `server` (internal); import `httpRateControl`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';

export interface ControlFigure {
  rate: number;
  requests: number;
  cpuUsPerRequest: number;
}

const self = new URL(import.meta.url).pathname;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The child's first message; rejects when it exits without one (a crash never hangs the bench). */
function reply<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`control child exited (${String(code)}) without its figure`)));
  });
}

/** CPU per request of a plain node:http client at each rate (req/s), measured in turn for `measureS` seconds each. */
export async function httpRateControl(rates: readonly number[], measureS: number): Promise<ControlFigure[]> {
  const server = fork(self, ['server'], { execArgv: ['--import', 'tsx'] });
  try {
    const port = Number(await reply<number>(server));
    const out: ControlFigure[] = [];
    for (const rate of rates) {
      const client = fork(self, ['client', String(port), String(rate), '5', String(measureS)], {
        execArgv: ['--import', 'tsx'],
      });
      out.push(await reply<ControlFigure>(client));
      client.kill();
      await sleep(500);
    }
    return out;
  } finally {
    server.kill();
  }
}

async function client(port: number, rate: number, warmS: number, measureS: number): Promise<void> {
  let done = 0;
  let owed = 0;
  const timer = setInterval(() => {
    for (owed += rate / 10; owed >= 1; owed--) {
      http
        .get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
          res.resume();
          res.on('end', () => done++);
        })
        .on('error', () => undefined);
    }
  }, 100);
  await sleep(warmS * 1000);
  done = 0;
  const u0 = process.cpuUsage();
  await sleep(measureS * 1000);
  const u = process.cpuUsage(u0);
  clearInterval(timer);
  const fig: ControlFigure = {
    rate,
    requests: done,
    cpuUsPerRequest: Math.round((u.user + u.system) / Math.max(done, 1)),
  };
  process.send!(fig);
}

if (process.argv[2] === 'server') {
  const s = http.createServer((_req, res) => res.end('ok'));
  s.listen(0, '127.0.0.1', () => process.send!((s.address() as { port: number }).port));
} else if (process.argv[2] === 'client') {
  const [port, rate, warmS, measureS] = process.argv.slice(3).map(Number);
  await client(port!, rate!, warmS!, measureS!);
}
