/**
 * The README's first five minutes, as a newcomer runs them: `npm start` with a fresh DATA_DIR, then the shell
 * commands between the README's walkthrough markers, run by bash with curl (only the two ports are changed, to free
 * ones). It passes only if every command works and the monitors they create come out OK, so the test fails when the
 * README drifts from the code.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { ensureBuilt } from '../support/build.kit.js';

const ROOT = path.resolve('.');

/** The shell blocks between `<!-- walkthrough:start` and `<!-- walkthrough:end -->`, joined. */
export function walkthroughScript(readme: string): string {
  const start = readme.indexOf('<!-- walkthrough:start');
  const end = readme.indexOf('<!-- walkthrough:end -->');
  assert.ok(start >= 0 && end > start, 'README has the walkthrough markers');
  const blocks = [...readme.slice(start, end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(blocks.length >= 2, 'the walkthrough has shell blocks');
  return blocks.join('\n');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let child: ChildProcess | undefined;
let ports: { monitor: number; agent: number };
let output = '';

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-walkthrough-'));
  ports = { monitor: await freePort(), agent: await freePort() };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: path.join(dir, 'data'),
    MONITOR_PORT: String(ports.monitor),
    AGENT_PORT: String(ports.agent),
    HOST: '127.0.0.1',
  };
  delete env.ADMIN_PASSWORD; // the README reads the generated password
  delete env.STORE_URL;
  ensureBuilt(); // `npm start` runs dist/ (npm install builds it; here it must match the sources under test)
  // `npm start`, in its own process group so the whole tree can be stopped by its id.
  child = spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const pw = path.join(dir, 'data', 'initial-admin-password');
  for (let i = 0; ; i++) {
    assert.ok(i < 240, `services did not come up within 120 s:\n${output}`);
    assert.equal(child.exitCode, null, `npm start exited:\n${output}`);
    if (fs.existsSync(pw) && fs.existsSync(path.join(dir, 'data', 'certs', 'client.p12'))) {
      const c = new HttpsClient('https://127.0.0.1', certsFrom(path.join(dir, 'data', 'certs')), false);
      const up = await Promise.all(
        [ports.monitor, ports.agent].map((p) =>
          c
            .request('GET', `https://127.0.0.1:${p}/ping`)
            .then((r) => r.status === 200)
            .catch(() => false),
        ),
      );
      c.close();
      if (up.every(Boolean)) break;
    }
    await sleep(500);
  }
});

after(async () => {
  const group = (sig: NodeJS.Signals): boolean => {
    try {
      process.kill(-child!.pid!, sig); // the process group of the npm start this test spawned
      return true;
    } catch {
      return false; // already gone
    }
  };
  if (child?.pid && group('SIGTERM')) {
    for (let i = 0; i < 40 && group(0 as unknown as NodeJS.Signals); i++) await sleep(250);
    group('SIGKILL');
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test("the README's walkthrough, run as written from a fresh DATA_DIR, ends with its monitors OK", async () => {
  const script = walkthroughScript(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'))
    .replaceAll('8051', String(ports.monitor))
    .replaceAll('8070', String(ports.agent));
  // `npm link` as the README says: `sentinel` on the PATH is this checkout's bin; its config stays in the test's dir.
  const binDir = path.join(dir, 'bin');
  fs.mkdirSync(binDir);
  fs.symlinkSync(path.join(ROOT, 'bin', 'sentinel.mjs'), path.join(binDir, 'sentinel'));
  const env = { ...process.env, PATH: `${binDir}:${process.env.PATH}`, SENTINEL_CONFIG_DIR: path.join(dir, 'cli') };
  const r = spawnSync('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, `the walkthrough failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /\{"message":"pong"\}/);
  assert.match(r.stdout, /"logLevel":"/, 'GET /setting answered with the token');
  assert.match(r.stdout, /"code":201,"message":"tcp monitor agent-port created"/);
  assert.match(r.stdout, /\{"name":"agent-port",[^}]*"status":"OK"/);
  assert.match(r.stdout, /"code":201,"message":"api monitor agent-ping created"/);
  assert.match(r.stdout, /\{"name":"agent-ping",[^}]*"status":"OK"/);
  assert.match(r.stdout, /logged in to https:\/\/localhost:\d+ as admin until/);
  assert.match(r.stdout, /2 monitors on \(0 off\): OK 2/, 'sentinel status as the README shows it');
  assert.match(r.stdout, /agent-ping +api +5MIN +on +OK/, 'sentinel monitors lists them');

  // And the service agrees: the monitors' last results are OK.
  const c = new HttpsClient(`https://127.0.0.1:${ports.monitor}`, certsFrom(path.join(dir, 'data', 'certs')));
  await c.login('admin', fs.readFileSync(path.join(dir, 'data', 'initial-admin-password'), 'utf8').trim());
  const list = await c.request('GET', '/monitors');
  const last = Object.fromEntries(list.body.map((m: { name: string; last?: { status: string } }) => [m.name, m.last]));
  assert.equal(last['agent-port']?.status, 'OK');
  assert.equal(last['agent-ping']?.status, 'OK');
  c.close();
});
