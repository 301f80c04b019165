/**
 * SMTP through the HTTP API against real smtp-server instances (plain relay, STARTTLS with AUTH, implicit TLS):
 * POST /setsmtpvault stores the settings and reports what a probe of the server found and what sending will use;
 * smtpFrom must be an address; a monitor with emailOnF "true" (and no notifyStatus) mails its recipients; a delivery
 * that fails (starttls required against a plain relay) is in /alerting/deliveries.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { makeTestCerts } from '../support/http-targets.fixture.js';

interface Mail {
  to: string[];
  raw: string;
  secure: boolean;
}

const certs = makeTestCerts();
const mails: Mail[] = [];

async function smtpServer(opts: SMTPServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    logger: false,
    key: certs.serverKeyPem,
    cert: certs.serverCertPem,
    onAuth(auth, _s, cb) {
      if (auth.username === 'mailer' && auth.password === 'Mail-pass-1') cb(null, { user: 'mailer' });
      else cb(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
        });
        cb();
      });
    },
    ...opts,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let h: MonitorHarness;
let plain: Awaited<ReturnType<typeof smtpServer>>;
let starttls: Awaited<ReturnType<typeof smtpServer>>;
let implicit: Awaited<ReturnType<typeof smtpServer>>;
before(async () => {
  [h, plain, starttls, implicit] = await Promise.all([
    startMonitor({ service: { notify: { smtpTls: { ca: certs.caPem } } } }),
    smtpServer({ disabledCommands: ['STARTTLS', 'AUTH'] }),
    smtpServer({}),
    smtpServer({ secure: true }),
  ]);
});
after(async () => {
  await Promise.all([h?.stop(), plain?.close(), starttls?.close(), implicit?.close()]);
});

const setSmtp = (body: Record<string, string>) => h.admin.request('POST', '/setsmtpvault', { body });

test('a plain relay with the default smtpSecure starttls: stored, and the probe says mail will not go out', async () => {
  const r = await setSmtp({ smtpHost: '127.0.0.1', smtpPort: String(plain.port), smtpFrom: 'alerts@example.com' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.smtpHost, '127.0.0.1', 'stored even though the probe fails');
  assert.equal(r.body.smtpSecure, 'starttls');
  const p = r.body.probe;
  assert.equal(p.ok, false);
  assert.equal(p.connected, true);
  assert.equal(p.starttlsOffered, false);
  assert.match(p.greeting, /^220 /);
  assert.match(p.willUse, /does not offer it.*smtpSecure none/);
  assert.match(r.body.message, /stored, but mail will not go out/);
  const none = await setSmtp({ smtpSecure: 'none' });
  assert.equal(none.body.probe.ok, true, none.text);
  assert.match(none.body.probe.willUse, /plain, unencrypted connection to 127\.0\.0\.1:\d+, no login/);
  assert.equal(none.body.probe.auth, 'not attempted');
});

test('STARTTLS with AUTH: TLS set up, login accepted; a wrong password is reported, never echoed', async () => {
  const ok = await setSmtp({
    smtpPort: String(starttls.port),
    smtpSecure: 'starttls',
    smtpUser: 'mailer',
    smtpPassword: 'Mail-pass-1',
  });
  assert.equal(ok.status, 200, ok.text);
  const p = ok.body.probe;
  assert.equal(p.ok, true, JSON.stringify(p));
  assert.equal(p.starttlsOffered, true);
  assert.match(p.tls.protocol, /^TLSv1\.[23]$/);
  assert.equal(p.tls.certificateTrusted, true);
  assert.ok(p.authMechanisms.includes('PLAIN'));
  assert.equal(p.auth, 'accepted');
  assert.match(p.willUse, /STARTTLS \(encrypted\).*login as mailer/);
  const bad = await setSmtp({ smtpPassword: 'Wrong-pass-2' });
  assert.equal(bad.body.probe.ok, false);
  assert.equal(bad.body.probe.auth, 'rejected');
  assert.match(bad.body.probe.authReply, /^535/);
  assert.ok(!bad.text.includes('Wrong-pass-2'), 'the password is never in the answer');
  assert.equal(bad.body.smtpPassword, 'set');
});

test('implicit TLS (smtpSecure tls), and an unreachable server', async () => {
  const tls = await setSmtp({ smtpPort: String(implicit.port), smtpSecure: 'tls', smtpPassword: 'Mail-pass-1' });
  assert.equal(tls.body.probe.ok, true, JSON.stringify(tls.body.probe));
  assert.match(tls.body.probe.tls.protocol, /^TLSv1\.[23]$/);
  assert.match(tls.body.probe.willUse, /^implicit TLS/);
  const down = await setSmtp({ smtpPort: '9', smtpSecure: 'none' });
  assert.equal(down.status, 200);
  assert.equal(down.body.smtpPort, '9');
  assert.equal(down.body.probe.connected, false);
  assert.match(down.body.probe.error, /ECONNREFUSED/);
});

test('smtpFrom must be an address or "Name <address>"', async () => {
  const bad = await setSmtp({ smtpFrom: 'not an address' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, 'body.smtpFrom');
  const ok = await setSmtp({ smtpFrom: 'Sentinel <alerts@example.com>', smtpHost: '' });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.probe, undefined, 'no host: nothing to probe');
});

test('emailOnF "true" without notifyStatus mails the recipients; a failing delivery is listed', async () => {
  await setSmtp({
    smtpHost: '127.0.0.1',
    smtpPort: String(plain.port),
    smtpSecure: 'none',
    smtpUser: '',
    smtpPassword: '',
    smtpFrom: 'Sentinel <alerts@example.com>',
    smtpEnabled: 'true',
  });
  const c = await h.admin.request('POST', '/tcp/create', {
    body: { name: 'mail-down', state: 'off', ip: '127.0.0.1', port: '9', emailOnF: 'true', emailR: 'ops@example.com' },
  });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.body.warnings, undefined, 'SMTP enabled, notify on: nothing to warn about');
  const before = mails.length;
  assert.equal((await h.admin.request('GET', '/monitor/run/mail-down/hide')).body.status, 'DOWN');
  await h.svc.alerting.idle();
  const mail = mails.slice(before);
  assert.equal(mail.length, 1, 'one problem alert by email');
  assert.deepEqual(mail[0]!.to, ['ops@example.com']);
  assert.match(mail[0]!.raw, /mail-down/);
  // The default smtpSecure starttls against this plain relay: the send fails, and the delivery log says why.
  await setSmtp({ smtpSecure: 'starttls' });
  const f = await h.admin.request('POST', '/tcp/create', {
    body: { name: 'mail-fail', state: 'off', ip: '127.0.0.1', port: '9', emailOnF: 'true', emailR: 'ops@example.com' },
  });
  assert.equal(f.status, 201, f.text);
  await h.admin.request('GET', '/monitor/run/mail-fail/hide');
  await h.svc.alerting.idle();
  const d = await h.admin.request('GET', '/alerting/deliveries?limit=10');
  assert.equal(d.status, 200, d.text);
  assert.ok(
    d.body.some(
      (x: { channel: string; outcome: string; monitor: string; error?: string }) =>
        x.channel === 'email' &&
        x.monitor === 'mail-fail' &&
        x.outcome === 'failed' &&
        /STARTTLS|500/.test(x.error ?? ''),
    ),
    d.text,
  );
});
