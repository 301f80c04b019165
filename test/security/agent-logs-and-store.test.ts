/**
 * docs/security.md §17 and "Bugs found under fuzzing", through the agent's HTTP API (the real agent on port 0):
 * - a `user` cannot download the monitor service's log from the shared log folder (only the agent's own files);
 * - `readonly` and `user` see process command lines with passwords, tokens and URL credentials redacted, admin in full;
 * - a log download announces a size and sends exactly that many bytes although the log grows while it is sent, so the
 *   next response on the same keep-alive connection parses (before: the extra bytes broke it);
 * - reads racing /reinitDatabase answer 200 (or 503), never 500.
 * Each fails on the code before the fix.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { after, before, test } from 'node:test';
import { startAgent, type AgentHarness } from '../support/agent.harness.js';
import { certsFrom, HttpsClient } from '../support/https-client.kit.js';

let h: AgentHarness;
const clients: HttpsClient[] = [];

async function agentUser(username: string, group: 'user' | 'readonly'): Promise<HttpsClient> {
  const password = `${username}-Pass-12345`;
  const r = await h.admin.request('POST', '/api/users', {
    body: { username, password, fullname: username, group, enabled: 'true' },
  });
  assert.equal(r.status, 201, r.text);
  const c = new HttpsClient(h.url, certsFrom(path.join(h.dataDir, 'certs')));
  clients.push(c);
  await c.login(username, password, '/api/auth');
  return c;
}

before(async () => {
  h = await startAgent();
});
after(async () => {
  for (const c of clients) c.close();
  await h?.close();
});

test('§17: a user downloads the agent log but not the monitor service log in the shared folder', async () => {
  const logDir = path.join(h.dataDir, 'logs');
  fs.writeFileSync(path.join(logDir, 'monitor.log'), 'MONITOR-SECRET-LINE\n');
  fs.writeFileSync(path.join(logDir, 'monitor-20261124-0000-1.log.gz'), 'MONITOR-SECRET-GZ');
  fs.writeFileSync(path.join(logDir, 'agent-20261124-0000-1.log.gz'), 'AGENT-ROTATED');
  const user = await agentUser('logreader', 'user');
  for (const p of [
    '/discovery/logfile/server/monitor.log',
    '/serverlogfiles/monitor-20261124-0000-1.log.gz',
    '/discovery/logfile/server/agentx.log',
  ]) {
    const r = await user.request('GET', p);
    assert.ok([400, 404].includes(r.status), `${p} → ${r.status}`);
    assert.ok(!r.text.includes('MONITOR-SECRET'), `${p} leaked the monitor log`);
  }
  assert.equal((await user.request('GET', '/discovery/logfile/server/agent.log')).status, 200);
  const gz = await user.request('GET', '/serverlogfiles/agent-20261124-0000-1.log.gz');
  assert.deepEqual([gz.status, gz.text], [200, 'AGENT-ROTATED']);
});

/** A process listening on a port with secrets on its command line. */
async function secretListener(): Promise<{ port: number; child: ChildProcess }> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const port = (probe.address() as net.AddressInfo).port;
  probe.close();
  await once(probe, 'close');
  const script = `require('net').createServer().listen(${port}, '127.0.0.1', () => console.log('up'))`;
  const args = [
    '-e',
    script,
    '--',
    '--password',
    'Hunter2-Space',
    '--password=Hunter2-Eq',
    '-pHunter2-Short',
    'token=Tok-Value-1',
    '--api-key=Key-Value-1',
    '--client-secret',
    'Secret-Value-1',
    'postgres://svc:Url-Pass-1@db.example:5432/app',
    '--port',
    String(port),
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  await once(child.stdout, 'data');
  return { port, child };
}

test('§17: readonly and user see command lines redacted; admin sees them in full', async () => {
  const { port, child } = await secretListener();
  try {
    const secrets = ['Hunter2-Space', 'Hunter2-Eq', 'Hunter2-Short', 'Tok-Value-1', 'Key-Value-1', 'Secret-Value-1'];
    const full = await h.admin.request('GET', `/getProcessByPort/${port}`);
    assert.equal(full.status, 200, full.text);
    for (const s of [...secrets, 'Url-Pass-1']) assert.ok(full.body.cmdline.includes(s), `admin sees ${s}`);
    for (const group of ['readonly', 'user'] as const) {
      const c = await agentUser(`cmd${group}`, group);
      const r = await c.request('GET', `/getProcessByPort/${port}`);
      assert.equal(r.status, 200, r.text);
      for (const s of [...secrets, 'Url-Pass-1'])
        assert.ok(!r.text.includes(s), `${group} must not see ${s}: ${r.text}`);
      assert.equal(r.body.pid, child.pid);
      assert.ok(r.body.cmdline.includes(`--port ${port}`), `harmless arguments stay: ${r.body.cmdline}`);
      assert.ok(r.body.cmdline.includes('postgres://svc:***@db.example:5432/app'), r.body.cmdline);
      assert.ok(r.body.cmdline.includes('--password ***'), r.body.cmdline);
    }
  } finally {
    child.kill();
  }
});

/** A raw mTLS connection that keeps what it receives (chunks, joined on demand) for byte-exact HTTP checks. */
interface RawConn {
  sock: tls.TLSSocket;
  received: number;
  bytes(): Buffer;
  wait(pred: () => boolean): Promise<void>;
}

function rawConn(): Promise<RawConn> {
  const u = new URL(h.url);
  const c = certsFrom(path.join(h.dataDir, 'certs'));
  const sock = tls.connect({ host: u.hostname, port: Number(u.port), ca: c.ca, cert: c.cert, key: c.key });
  let chunks: Buffer[] = [];
  const conn: RawConn = {
    sock,
    received: 0,
    bytes() {
      chunks = [Buffer.concat(chunks)];
      return chunks[0]!;
    },
    wait(pred) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pred()) return;
          sock.off('data', check);
          sock.off('close', closed);
          resolve();
        };
        const closed = (): void => reject(new Error(`connection closed; ${conn.received} bytes received`));
        sock.on('data', check);
        sock.on('close', closed);
        check();
      });
    },
  };
  sock.on('data', (d: Buffer) => {
    chunks.push(d);
    conn.received += d.length;
  });
  return once(sock, 'secureConnect').then(() => conn);
}

test('fuzz: a log growing during its download sends exactly Content-Length; keep-alive survives', async () => {
  const file = path.join(h.dataDir, 'logs', 'agent.log');
  fs.appendFileSync(file, Buffer.alloc(16 * 1024 * 1024, 'a\n'));
  const conn = await rawConn();
  const req = (p: string): string =>
    `GET ${p} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${h.admin.token}\r\nConnection: keep-alive\r\n\r\n`;
  conn.sock.write(req('/discovery/logfile/server/agent.log'));
  await conn.wait(() => conn.bytes().indexOf('\r\n\r\n') !== -1);
  conn.sock.pause();
  const headEnd = conn.bytes().indexOf('\r\n\r\n') + 4;
  const head = conn.bytes().subarray(0, headEnd).toString('latin1');
  assert.match(head, /^HTTP\/1\.1 200/);
  const bodyEnd = headEnd + Number(/content-length: (\d+)/i.exec(head)?.[1]);
  assert.ok(bodyEnd - headEnd >= 16 * 1024 * 1024, head);
  // The file grows while the server is still sending it (the client is not reading: the server's stream is paused).
  for (let i = 0; i < 40; i++) fs.appendFileSync(file, Buffer.alloc(128 * 1024, 'GROWN\n'));
  conn.sock.resume();
  await conn.wait(() => conn.received >= bodyEnd);
  conn.sock.write(req('/ping'));
  await conn.wait(() => conn.received >= bodyEnd + 12);
  const next = conn
    .bytes()
    .subarray(bodyEnd, bodyEnd + 12)
    .toString('latin1');
  conn.sock.destroy();
  assert.equal(next, 'HTTP/1.1 200', 'the second response starts right after the announced length');
});

test('fuzz: reads racing /reinitDatabase answer 200 or 503, never 500', async () => {
  await h.admin.request('POST', '/updateSetting', { body: { ports: '1,2,3', processes: 'node' } });
  for (let i = 0; i < 3; i++) assert.equal((await h.admin.request('GET', '/runDiscovery')).status, 200);
  const statuses = new Map<string, number>();
  const bad: string[] = [];
  let stop = false;
  const reads = [
    '/v1/db/discovery/bucket/METRICS/allJSON',
    '/v1/db/discovery/bucket/STATUS_HISTORY/allJSON',
    '/v1/db/discovery/bucket/STATUS/allJSON',
    '/api/db/discovery/bucket/METRICS/key/system_cpu',
    '/v1/db/discovery/stats',
    `/api/reportSysMetricsGraph/0/${Date.now() + 3_600_000}`,
    `/process/reportGraph/process/node/0/${Date.now() + 3_600_000}`,
  ];
  const reader = async (p: string): Promise<void> => {
    while (!stop) {
      const r = await h.admin.request('GET', p);
      statuses.set(String(r.status), (statuses.get(String(r.status)) ?? 0) + 1);
      if (![200, 404, 503].includes(r.status)) bad.push(`${p} → ${r.status} ${r.text.slice(0, 200)}`);
    }
  };
  const readers = reads.flatMap((p) => [reader(p), reader(p)]);
  for (let i = 0; i < 15; i++) {
    const cycle = h.admin.request('GET', '/runDiscovery');
    const r = await h.admin.request('POST', '/reinitDatabase');
    assert.equal(r.status, 200, r.text);
    assert.equal((await cycle).status, 200);
  }
  stop = true;
  await Promise.all(readers);
  assert.deepEqual(bad, [], `statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
  assert.ok((statuses.get('200') ?? 0) > 0);
});
