import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildEmail, emailChannel } from './email.js';

interface Received {
  from: string;
  to: string[];
  raw: string;
  user?: string;
}

/** Minimal RFC 5322/2045 reading: unfolded headers, and the text/plain and text/html parts (quoted-printable). */
function parseMail(raw: string): { headers: Record<string, string>; text: string; html: string } {
  const [head, ...rest] = raw.split(/\r\n\r\n/);
  const headers: Record<string, string> = {};
  for (const line of head!.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  const body = rest.join('\r\n\r\n');
  const qp = (s: string) =>
    s.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  const part = (type: string) => {
    const m = new RegExp(`Content-Type: ${type}[^]*?\\r\\n\\r\\n([^]*?)\\r\\n--`, 'i').exec(body);
    return m ? qp(m[1]!) : '';
  };
  return { headers, text: part('text/plain'), html: part('text/html') };
}

const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'shop', type: 'url', displayName: 'Shop front' },
  status: 'CRITICAL',
  previousStatus: 'MINOR',
  message: 'response 4200 ms > 3000 ms <critical>',
  responseTimeMs: 4200,
  timestampMs: 1_700_000_000_000,
  recipients: ['ops@example.com', 'dev@example.com'],
};

describe('email channel', () => {
  const mails: Received[] = [];
  let rejectNext: { code: number; text: string } | undefined;
  let server: SMTPServer;
  let port = 0;
  before(async () => {
    server = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _s, cb) {
        if (auth.username === 'mailer' && auth.password === 's3cret') cb(null, { user: 'mailer' });
        else cb(Object.assign(new Error('Invalid credentials'), { responseCode: 535 }));
      },
      onRcptTo(_a, _s, cb) {
        const r = rejectNext;
        if (r) cb(Object.assign(new Error(r.text), { responseCode: r.code }));
        else cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
            user: session.user as string | undefined,
          });
          cb();
        });
      },
      logger: false,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const settings = () => ({
    smtpHost: '127.0.0.1',
    smtpPort: String(port),
    smtpUser: 'mailer',
    smtpPassword: 's3cret',
    smtpFrom: 'Sentinel <sentinel@example.com>',
    smtpEnabled: 'true',
    smtpSecure: 'none',
  });

  it('delivers text + HTML to the recipients with status and monitor in the subject', async () => {
    const ch = bindChannel(emailChannel, undefined);
    await ch.send(alert, settings());
    await ch.close();
    assert.equal(mails.length, 1);
    const m = mails[0]!;
    assert.equal(m.user, 'mailer');
    assert.equal(m.from, 'sentinel@example.com');
    assert.deepEqual(m.to, ['ops@example.com', 'dev@example.com']);
    const p = parseMail(m.raw);
    assert.equal(p.headers.subject, '[CRITICAL] Shop front (shop) is CRITICAL (was MINOR)');
    assert.equal(p.headers.to, 'ops@example.com, dev@example.com');
    assert.match(p.headers.from!, /Sentinel <sentinel@example.com>/);
    assert.match(p.headers['content-type']!, /multipart\/alternative/);
    assert.match(p.text, /Status: CRITICAL/);
    assert.match(p.text, /Response time: 4200 ms/);
    assert.match(p.html, /<th align="left">Status<\/th><td>CRITICAL<\/td>/);
    assert.match(p.html, /&lt;critical&gt;/, 'HTML is escaped');
  });

  it('maps SMTP failures: 5xx and bad auth not retryable, 4xx retryable, no recipients refused', async () => {
    const ch = bindChannel(emailChannel, undefined);
    rejectNext = { code: 550, text: 'No such user' };
    const e550 = await ch.send(alert, settings()).catch((e) => e);
    rejectNext = { code: 451, text: 'Try later' };
    const e451 = await ch.send(alert, settings()).catch((e) => e);
    rejectNext = undefined;
    await ch.close();
    const eauth = await ch.send(alert, { ...settings(), smtpPassword: 'wrong' }).catch((e) => e);
    await ch.close();
    const enone = await ch.send({ ...alert, recipients: [] }, settings()).catch((e) => e);
    for (const e of [e550, e451, eauth, enone]) assert.ok(e instanceof ChannelError, String(e));
    assert.deepEqual([e550.retryable, e451.retryable, eauth.retryable, enone.retryable], [false, true, false, false]);
    assert.ok(!eauth.message.includes('wrong'));
  });

  it('probe: connects and logs in without sending; a wrong password and a silent port fail with a reason', async () => {
    const ch = bindChannel(emailChannel, undefined, 1500);
    const before = mails.length;
    const ok = await ch.probe(settings());
    assert.equal(ok.ok, true, ok.message);
    assert.ok(ok.latencyMs > 0);
    const bad = await ch.probe({ ...settings(), smtpPassword: 'nope' });
    assert.deepEqual([bad.ok, /authentication failed/.test(bad.message ?? '')], [false, true]);
    assert.ok(!(bad.message ?? '').includes('nope'));
    const closed = await ch.probe({ ...settings(), smtpPort: '1' });
    assert.equal(closed.ok, false);
    assert.equal(mails.length, before, 'a probe sends no mail');
    assert.equal((await ch.probe({ smtpFrom: 'x@y' })).ok, false, 'not configured');
  });

  it('routes a monitor by emailOnF and emailR only', () => {
    assert.deepEqual(emailChannel.route({ emailOnF: 'true', emailR: 'a@x, b@y' }), { recipients: ['a@x', 'b@y'] });
    assert.equal(emailChannel.route({ emailOnF: 'false', emailR: 'a@x' }), undefined);
    assert.equal(emailChannel.route({ emailOnF: 'true', emailR: ' ' }), undefined);
  });

  it('builds a recovery mail', () => {
    const m = buildEmail({ ...alert, kind: 'recovery', status: 'OK', previousStatus: 'CRITICAL' });
    assert.equal(m.subject, '[RECOVERED] Shop front (shop) is OK');
    assert.match(m.text, /Previous status: CRITICAL/);
  });
});
