/**
 * POST /checkConnectIntegrators against real peers on loopback: a silent TCP server (accepts, never speaks) gives an
 * error result that says timeout, and the call returns; a real smtp-server with STARTTLS and AUTH gives ok, a wrong
 * password gives an authentication error, a server without STARTTLS is refused when smtpTLS is true.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { createPki } from '../core/pki/certs.js';
import { startAgent, type AgentHarness } from '../../test/support/agent.harness.js';

const TIMEOUT_MS = 1500;
let h: AgentHarness;
let silent: Server;
const silentSockets = new Set<Socket>();
let tlsSmtp: SMTPServer;
let plainSmtp: SMTPServer;
const authSeen: Array<{ user: string; secure: boolean }> = [];

async function listen(s: { listen(port: number, host: string): unknown }, server: Server): Promise<number> {
  s.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

let silentPort: number;
let tlsPort: number;
let plainPort: number;

before(async () => {
  const pki = await createPki();
  silent = createServer((sock) => {
    silentSockets.add(sock);
    sock.on('close', () => silentSockets.delete(sock));
  });
  silentPort = await listen(silent, silent);
  tlsSmtp = new SMTPServer({
    secure: false,
    key: pki.server.key,
    cert: pki.server.cert,
    logger: false,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, session, cb) {
      authSeen.push({ user: auth.username ?? '', secure: session.secure });
      if (auth.username === 'alerts' && auth.password === 'right-pw') cb(null, { user: 'alerts' });
      else cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
  });
  tlsPort = await listen(tlsSmtp, tlsSmtp.server);
  plainSmtp = new SMTPServer({ disabledCommands: ['STARTTLS'], authOptional: true, logger: false });
  plainPort = await listen(plainSmtp, plainSmtp.server);
  h = await startAgent({ smtpTls: { ca: pki.ca.cert }, smtpTimeoutMs: TIMEOUT_MS });
});

after(async () => {
  await h?.close();
  for (const s of silentSockets) s.destroy();
  silent?.close();
  tlsSmtp?.close();
  plainSmtp?.close();
});

async function check(smtp: Record<string, string>): Promise<{
  ok: boolean;
  integrators: Array<{ name: string; configured: boolean; ok: boolean; latencyMs: number; error?: string }>;
}> {
  const s = await h.admin.request('POST', '/setsmtp', {
    body: {
      smtpEnabled: 'true',
      smtpServerName: '127.0.0.1',
      smtpFrom: 'agent@example.test',
      smtpTo: 'ops@example.test',
      ...smtp,
    },
  });
  assert.equal(s.status, 200, s.text);
  const r = await h.admin.request('POST', '/checkConnectIntegrators');
  assert.equal(r.status, 200, r.text);
  return r.body;
}

test('nothing configured: reported as not configured, overall ok', async () => {
  const r = await h.admin.request('POST', '/checkConnectIntegrators');
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.integrators, [
    { name: 'smtp', configured: false, ok: false, latencyMs: 0, error: 'not configured' },
  ]);
  assert.equal(r.body.ok, true);
});

test('a silent TCP server: the check returns an error result that says timeout', async () => {
  const r = await check({ smtpPort: String(silentPort), smtpTLS: 'true', smtpUsername: 'alerts', smtpPwd: 'right-pw' });
  assert.equal(r.ok, false);
  const smtp = r.integrators[0]!;
  assert.equal(smtp.configured, true);
  assert.equal(smtp.ok, false);
  assert.match(smtp.error ?? '', /timeout/i);
  assert.ok(smtp.latencyMs > 0);
  assert.ok(!JSON.stringify(r).includes('right-pw'));
});

test('a real SMTP server with STARTTLS (smtpTLS true) and AUTH: ok; the login happened over TLS', async () => {
  authSeen.length = 0;
  const r = await check({ smtpPort: String(tlsPort), smtpTLS: 'true', smtpUsername: 'alerts', smtpPwd: 'right-pw' });
  assert.equal(r.integrators[0]!.ok, true, JSON.stringify(r));
  assert.equal(r.ok, true);
  assert.deepEqual(authSeen, [{ user: 'alerts', secure: true }]);
});

test('a wrong password: authentication failed; no STARTTLS offered while smtpTLS is true: refused', async () => {
  const bad = await check({ smtpPort: String(tlsPort), smtpTLS: 'true', smtpUsername: 'alerts', smtpPwd: 'wrong-pw' });
  assert.equal(bad.integrators[0]!.ok, false);
  assert.match(bad.integrators[0]!.error ?? '', /authentication failed/);
  assert.ok(!JSON.stringify(bad).includes('wrong-pw'));
  const noTls = await check({ smtpPort: String(plainPort), smtpTLS: 'true', smtpUsername: '', smtpPwd: '' });
  assert.equal(noTls.integrators[0]!.ok, false, JSON.stringify(noTls));
  const plain = await check({ smtpPort: String(plainPort), smtpTLS: 'false', smtpUsername: '', smtpPwd: '' });
  assert.equal(plain.integrators[0]!.ok, true, JSON.stringify(plain));
});
