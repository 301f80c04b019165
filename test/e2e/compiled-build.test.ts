/**
 * The shipped build: `tsc -p tsconfig.build.json` compiles src/ to dist/, and `node dist/start-all.js` (what
 * `npm start` runs) starts both services with plain node (no tsx loader in any process: one supervisor and one
 * process per service), serving /ping and the dashboard's files; SIGTERM to the supervisor stops both and it exits 0.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ensureBuilt, ROOT } from '../support/build.kit.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';

let dir: string;
let child: ChildProcess;
let output = '';
const urls: Record<string, string> = {};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The pids of a process's children (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

before(async () => {
  ensureBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compiled-build-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dir,
    MONITOR_PORT: '0',
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
  };
  env.ADMIN_PASSWORD = 'compiled-admin-1';
  delete env.STORE_URL;
  delete env.NODE_OPTIONS;
  child = spawn(process.execPath, [path.join(ROOT, 'dist', 'start-all.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const seen = (d: Buffer) => {
    output += d.toString();
    for (const m of output.matchAll(/^(Monitor service|discovery_agent) listening on (https:\/\/\S+)/gm))
      urls[m[1]!] = m[2]!.replace('localhost', '127.0.0.1');
  };
  child.stdout!.on('data', seen);
  child.stderr!.on('data', seen);
  for (let i = 0; Object.keys(urls).length < 2; i++) {
    assert.ok(i < 240, `services did not come up within 120 s:\n${output}`);
    assert.equal(child.exitCode, null, `dist/start-all.js exited:\n${output}`);
    await sleep(500);
  }
});

after(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('both services run from dist/ with plain node and answer /ping; the dashboard files are served', async () => {
  const kids = childrenOf(child.pid!);
  assert.equal(kids.length, 2, 'one process per service');
  for (const pid of kids) {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    assert.match(cmd, /dist\/(monitor|agent)\/main\.js/);
    assert.doesNotMatch(cmd, /tsx/, 'no loader at run time');
    assert.deepEqual(childrenOf(pid), [], `${cmd} starts no helper process`);
  }
  const c = new HttpsClient('https://127.0.0.1', certsFrom(path.join(dir, 'certs')), false);
  try {
    for (const url of Object.values(urls)) {
      const r = await c.request('GET', `${url}/ping`);
      assert.equal(r.status, 200, `${url}/ping: ${r.text}`);
    }
    const ui = await c.request('GET', `${urls['Monitor service']}/`);
    assert.equal(ui.status, 200, 'the dashboard (web/) is served by the compiled monitor');
    assert.match(ui.text, /<html/i);
  } finally {
    c.close();
  }
});

test('SIGTERM to the supervisor stops both services and it exits 0', async () => {
  const kids = childrenOf(child.pid!);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, output);
  for (const pid of kids) assert.throws(() => process.kill(pid, 0), 'service process gone');
});
