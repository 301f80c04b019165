/**
 * npm run bench:api — authenticated GET /setting over mTLS keep-alive against the real monitor service, vs a bare
 * Node https server with the same TLS setup (requestCert, same certificates) answering the same JSON. Both servers run
 * in child processes; this process is the load generator: BENCH_CONNECTIONS (32) keep-alive connections, each sending
 * requests back to back for BENCH_PHASE_MS (5000) per phase, phases alternating service, bare, service, bare after a
 * warm-up of each. BENCH_CPU_PROF=1 writes a --cpu-prof profile of the service child into $TMPDIR/bench-api-profiles/.
 * Last line: {"service_rps":…, "bare_rps":…, "ratio":…, …}. Target: ratio ≥ 0.6.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
const PW = 'bench-admin-pass-1';

async function serveMonitor(dataDir: string): Promise<void> {
  const { readConfig } = await import('../src/core/config/env.js');
  const { createMonitorService } = await import('../src/monitor/service.js');
  const cfg = readConfig('monitor', {
    DATA_DIR: dataDir,
    MONITOR_PORT: '0',
    HOST: '127.0.0.1',
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: PW,
  });
  const svc = await createMonitorService(cfg);
  const url = await svc.start();
  process.on('SIGTERM', () => void svc.stop().finally(() => process.exit(0)));
  console.log(JSON.stringify({ url }));
}

function serveBare(dataDir: string, bodyFile: string): void {
  const c = (n: string) => fs.readFileSync(path.join(dataDir, 'certs', n), 'utf8');
  const body = fs.readFileSync(bodyFile);
  const server = https.createServer(
    {
      key: c('server-key.pem'),
      cert: c('server.pem'),
      ca: c('ca.pem'),
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    (req, res) => {
      if (!req.headers.authorization?.startsWith('Bearer ')) {
        res.writeHead(401).end();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length })
        .end(body);
    },
  );
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address() as { port: number };
    console.log(JSON.stringify({ url: `https://127.0.0.1:${addr.port}` }));
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  server.on('connection', () => undefined);
}

function startChild(args: string[], nodeArgs: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', SELF, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const line = buf.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve({ child, url: (JSON.parse(line) as { url: string }).url });
    });
    child.on('exit', (code) => reject(new Error(`child ${args[0]} exited with ${code}`)));
  });
}

function request(agent: https.Agent, url: URL, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return NaN;
  }
}

async function phase(
  base: string,
  certs: { ca: string; cert: string; key: string },
  token: string,
  conns: number,
  ms: number,
  pid?: number,
) {
  const cpu0 = cpuMs(pid);
  const agent = new https.Agent({ keepAlive: true, maxSockets: conns, ...certs });
  const url = new URL('/setting', base);
  let ok = 0;
  let errors = 0;
  const end = Date.now() + ms;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: conns }, async () => {
      while (Date.now() < end) {
        try {
          if ((await request(agent, url, token)) === 200) ok++;
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  agent.destroy();
  return { rps: ok / s, errors, cpuUsPerReq: ((cpuMs(pid) - cpu0) * 1000) / ok };
}

async function main(): Promise<void> {
  const conns = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const phaseMs = Number(process.env.BENCH_PHASE_MS ?? 5000);
  const prof = process.env.BENCH_CPU_PROF === '1';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-api-'));
  const profDir = path.join(os.tmpdir(), 'bench-api-profiles');
  const children: ChildProcess[] = [];
  try {
    const mon = await startChild(['--serve-monitor', dataDir], prof ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []);
    children.push(mon.child);
    const c = (n: string) => fs.readFileSync(path.join(dataDir, 'certs', n), 'utf8');
    const certs = { ca: c('ca.pem'), cert: c('client.pem'), key: c('client-key.pem') };
    const login = await new Promise<{ token: string }>((resolve, reject) => {
      const req = https.request(
        new URL('/login', mon.url),
        { method: 'POST', ...certs, headers: { 'content-type': 'application/json' } },
        (res) => {
          let b = '';
          res.on('data', (d) => (b += d));
          res.on('end', () => resolve(JSON.parse(b) as { token: string }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ username: 'admin', password: PW }));
    });
    const token = login.token;
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get(new URL('/setting', mon.url), { ...certs, headers: { authorization: `Bearer ${token}` } }, (res) => {
          let b = '';
          res.on('data', (d) => (b += d));
          res.on('end', () => resolve(b));
        })
        .on('error', reject);
    });
    const bodyFile = path.join(dataDir, 'setting.json');
    fs.writeFileSync(bodyFile, body);
    const bare = await startChild(['--serve-bare', dataDir, bodyFile]);
    children.push(bare.child);
    console.log(
      `GET /setting (${body.length} bytes), ${conns} keep-alive mTLS connections, ${phaseMs} ms per phase, ${os.cpus().length} CPUs`,
    );
    await phase(mon.url, certs, token, conns, 1000);
    await phase(bare.url, certs, token, conns, 1000);
    const svc: number[] = [];
    const bar: number[] = [];
    const svcCpu: number[] = [];
    const barCpu: number[] = [];
    let errors = 0;
    for (let round = 1; round <= 2; round++) {
      const s = await phase(mon.url, certs, token, conns, phaseMs, mon.child.pid);
      const b = await phase(bare.url, certs, token, conns, phaseMs, bare.child.pid);
      svc.push(s.rps);
      bar.push(b.rps);
      svcCpu.push(s.cpuUsPerReq);
      barCpu.push(b.cpuUsPerReq);
      errors += s.errors + b.errors;
      console.log(
        `round ${round}: service ${s.rps.toFixed(0)} req/s (${s.cpuUsPerReq.toFixed(0)} µs CPU/req), bare ${b.rps.toFixed(0)} req/s (${b.cpuUsPerReq.toFixed(0)} µs CPU/req), errors ${s.errors + b.errors}`,
      );
    }
    const avg = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
    const serviceRps = Math.round(avg(svc));
    const bareRps = Math.round(avg(bar));
    const ratio = Number((serviceRps / bareRps).toFixed(3));
    const serviceCpuUs = Math.round(avg(svcCpu));
    const bareCpuUs = Math.round(avg(barCpu));
    const cpuRatio = Number((bareCpuUs / serviceCpuUs).toFixed(3));
    console.log(`service ${serviceRps} req/s, bare https ${bareRps} req/s, ratio ${ratio} (target ≥ 0.6)`);
    console.log(
      `server CPU per request: service ${serviceCpuUs} µs, bare ${bareCpuUs} µs, bare/service ${cpuRatio} (the throughput ratio a CPU-bound server would reach; steadier on a shared machine)${prof ? `; profile in ${profDir}` : ''}`,
    );
    console.log(
      JSON.stringify({
        service_rps: serviceRps,
        bare_rps: bareRps,
        ratio,
        service_cpu_us_per_req: serviceCpuUs,
        bare_cpu_us_per_req: bareCpuUs,
        cpu_ratio: cpuRatio,
        connections: conns,
        phase_ms: phaseMs,
        errors,
      }),
    );
  } finally {
    await Promise.all(
      children.map(
        (ch) =>
          new Promise((r) => {
            ch.once('exit', r);
            ch.kill('SIGTERM');
            setTimeout(() => ch.kill('SIGKILL'), 10_000).unref();
          }),
      ),
    );
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const mode = process.argv[2];
if (mode === '--serve-monitor') await serveMonitor(process.argv[3]!);
else if (mode === '--serve-bare') serveBare(process.argv[3]!, process.argv[4]!);
else await main();
