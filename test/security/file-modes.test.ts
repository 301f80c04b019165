/**
 * docs/security.md §11 (review F14): the data folder is private to the service account. `npm start`'s launcher
 * (src/start-all.ts, both services as the product runs them) on a DATA_DIR left world-readable by an older version:
 * the folders become 0700 and the files 0600 at start, each change is logged, a symlink's target is left alone, and
 * everything the services write afterwards — stores, logs, certificates, backups, discover_metrics.json — is 0600 in
 * 0700 folders. In process (another umask, as an embedder or a test has), the services' own files are private too.
 * Each fails on the code before the fix (DATA_DIR 0755, stores, logs and backups 0644).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';
import { startMonitor } from '../support/monitor.harness.js';
import { startAgent } from '../support/agent.harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PW = 'file-modes-Admin-123';
const dirs: string[] = [];
let child: ChildProcess | undefined;

after(async () => {
  if (child?.pid && child.exitCode === null) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Every path under root with its mode, symlinks reported as such. */
function modes(root: string): Array<{ p: string; kind: 'dir' | 'file' | 'link' | 'other'; mode: number }> {
  const out: Array<{ p: string; kind: 'dir' | 'file' | 'link' | 'other'; mode: number }> = [];
  const visit = (p: string): void => {
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) return;
    const kind = st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
    out.push({ p: path.relative(root, p) || '.', kind, mode: st.mode & 0o777 });
    if (kind === 'dir') for (const n of fs.readdirSync(p)) visit(path.join(p, n));
  };
  visit(root);
  return out;
}

function assertPrivate(root: string): void {
  const loose = modes(root)
    .filter((e) => (e.kind === 'dir' && e.mode !== 0o700) || (e.kind === 'file' && e.mode !== 0o600))
    .map((e) => `${e.p} ${e.mode.toString(8)}`);
  assert.deepEqual(loose, [], 'every folder 0700, every file 0600');
}

/** A DATA_DIR as an older version left it: everything readable by all. */
function worldReadableDataDir(): string {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'file-modes-'));
  dirs.push(top);
  const data = path.join(top, 'data');
  for (const d of ['logs', 'backups', 'artifacts/m1/1700000000000'])
    fs.mkdirSync(path.join(data, d), { recursive: true });
  const files = [
    'stray.json',
    'logs/monitor-20261101-0000-1.log.gz',
    'backups/api-old.mdb',
    'artifacts/m1/1700000000000/a.png',
  ];
  for (const f of files) fs.writeFileSync(path.join(data, f), 'old');
  for (const f of files) fs.chmodSync(path.join(data, f), 0o644);
  for (const d of ['.', 'logs', 'backups', 'artifacts', 'artifacts/m1', 'artifacts/m1/1700000000000'])
    fs.chmodSync(path.join(data, d), 0o755);
  fs.symlinkSync('/etc/passwd', path.join(data, 'passwd-link'));
  return data;
}

async function waitForBoth(out: () => string): Promise<{ monitor: string; agent: string }> {
  for (let i = 0; ; i++) {
    const m = /Monitor service listening on (https:\/\/\S+)/.exec(out());
    const a = /discovery_agent listening on (https:\/\/\S+)/.exec(out());
    if (m && a) return { monitor: m[1]!, agent: a[1]! };
    assert.ok(i < 480 && child!.exitCode === null, `services did not come up:\n${out()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('npm start: a world-readable DATA_DIR is made private, logged, and everything written after is 0600', async () => {
  const data = worldReadableDataDir();
  const passwdMode = fs.statSync('/etc/passwd').mode & 0o777;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: data,
    MONITOR_PORT: '0',
    AGENT_PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: PW,
    LOG_STDOUT: 'false',
    LOG_LEVEL: 'info',
  };
  delete env.STORE_URL;
  const tsx = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  child = spawn(process.execPath, [tsx, path.join(ROOT, 'src', 'start-all.ts')], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const urls = await waitForBoth(() => output);
  const certs = certsFrom(path.join(data, 'certs'));
  const mon = new HttpsClient(urls.monitor.replace('localhost', '127.0.0.1'), certs);
  const agent = new HttpsClient(urls.agent.replace('localhost', '127.0.0.1'), certs);
  try {
    await mon.login('admin', PW);
    await agent.login('admin', PW, '/api/auth');
    const mb = await mon.request('POST', '/backupDatabase', { body: { database: 'api' } });
    assert.equal(mb.status, 200, mb.text);
    const ab = await agent.request('POST', '/backupDatabase');
    assert.equal(ab.status, 200, ab.text);
    assert.equal((await agent.request('GET', '/runDiscovery')).status, 200);
  } finally {
    mon.close();
    agent.close();
  }
  process.kill(-child.pid!, 'SIGTERM');
  if (child.exitCode === null) await new Promise((r) => child!.once('exit', r));
  for (const f of [
    'discover_metrics.json',
    'certs/ca.pem',
    'monitor-db/data.mdb',
    'agent-db/lock.mdb',
    'logs/agent.log',
  ])
    assert.ok(fs.existsSync(path.join(data, f)), `${f} written`);
  assertPrivate(data);
  assert.equal(fs.statSync('/etc/passwd').mode & 0o777, passwdMode, "a symlink's target is not touched");
  const logs = ['monitor.log', 'agent.log'].map((f) => fs.readFileSync(path.join(data, 'logs', f), 'utf8')).join('');
  assert.match(logs, /tightened the modes of \d+ paths in DATA_DIR/);
  for (const f of ['stray.json', 'backups/api-old.mdb', 'artifacts/m1/1700000000000/a.png'])
    assert.ok(logs.includes(JSON.stringify(path.join(data, f))), `${f} is named in the log`);
});

test('in process, with a umask of 022, the services still write private files', async () => {
  const previous = process.umask(0o022);
  try {
    const data = worldReadableDataDir();
    const m = await startMonitor({ dataDir: data });
    const b = await m.admin.request('POST', '/backupDatabase', { body: { database: 'url' } });
    assert.equal(b.status, 200, b.text);
    await m.stop({ keepData: true });
    const a = await startAgent({}, { DATA_DIR: data });
    assert.equal((await a.admin.request('POST', '/backupDatabase')).status, 200);
    assert.equal((await a.admin.request('GET', '/runDiscovery')).status, 200);
    await a.close();
    assertPrivate(data);
  } finally {
    process.umask(previous);
  }
});
