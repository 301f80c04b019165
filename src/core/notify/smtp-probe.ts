/**
 * A bounded SMTP conversation that finds out what sending mail will do, without sending any: connect (implicit TLS
 * for smtpSecure tls), greeting, EHLO and its extensions, STARTTLS when offered and asked for, EHLO again, AUTH with
 * the configured account when one is set (PLAIN or LOGIN), QUIT. The whole probe is bounded by `timeoutMs` whatever
 * the server does. The answer says what was found and what will be used (`willUse`), and `ok` is true only when mail
 * would go out as configured. The password is never part of the answer.
 */
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import type { SmtpSettings } from './channels/email.js';

export interface SmtpProbeResult {
  ok: boolean;
  host: string;
  port: number;
  /** smtpSecure as configured: starttls, tls or none. */
  mode: string;
  connected: boolean;
  greeting?: string;
  /** EHLO extensions as first offered (before STARTTLS). */
  extensions?: string[];
  starttlsOffered?: boolean;
  /** The TLS session, when one was set up (implicit or STARTTLS). */
  tls?: { protocol: string | null; cipher?: string; certificateTrusted: boolean };
  authMechanisms?: string[];
  /** accepted, rejected (with the server's reply), not offered, or not attempted (no smtpUser). */
  auth: 'accepted' | 'rejected' | 'not offered' | 'not attempted';
  authReply?: string;
  /** What sending will do with these settings, in words. */
  willUse: string;
  error?: string;
  latencyMs: number;
}

export interface SmtpProbeOptions {
  timeoutMs?: number;
  /** Extra TLS options (a test CA). */
  tls?: { ca?: string | Buffer; rejectUnauthorized?: boolean };
}

interface Reply {
  code: number;
  lines: string[];
}

/** Reads SMTP replies (multi-line: `250-…` continues, `250 …` ends) from a socket that may be swapped for TLS. */
class Conversation {
  private buf = '';
  private waiting: ((r: Reply | Error) => void) | undefined;
  private readonly replies: Reply[] = [];
  private pending: string[] = [];
  private failure: Error | undefined;
  socket!: net.Socket;

  attach(socket: net.Socket): void {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => this.onData(d));
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  detach(): void {
    this.socket.removeAllListeners('data');
    this.socket.removeAllListeners('error');
    this.socket.removeAllListeners('close');
  }

  private onData(d: string): void {
    this.buf += d;
    if (this.buf.length > 64 * 1024) return this.fail(new Error('reply too long'));
    let i: number;
    while ((i = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, i).replace(/\r$/, '');
      this.buf = this.buf.slice(i + 1);
      const m = /^(\d{3})([ -])(.*)$/.exec(line);
      if (!m) return this.fail(new Error(`not an SMTP reply: ${line.slice(0, 80)}`));
      this.pending.push(m[3]!);
      if (m[2] === ' ') {
        this.push({ code: Number(m[1]), lines: this.pending });
        this.pending = [];
      }
    }
  }

  private push(r: Reply): void {
    const w = this.waiting;
    if (w) {
      this.waiting = undefined;
      w(r);
    } else this.replies.push(r);
  }

  fail(e: Error): void {
    this.failure ??= e;
    const w = this.waiting;
    this.waiting = undefined;
    w?.(e);
  }

  read(): Promise<Reply> {
    const r = this.replies.shift();
    if (r) return Promise.resolve(r);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = (x) => (x instanceof Error ? reject(x) : resolve(x));
    });
  }

  async send(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.read();
  }
}

function connect(host: string, port: number, implicitTls: boolean, o: SmtpProbeOptions): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = implicitTls
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ...o.tls }, () => resolve(s))
      : net.connect({ host, port }, () => resolve(s));
    s.once('error', reject);
  });
}

function upgrade(socket: net.Socket, host: string, o: SmtpProbeOptions): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ socket, servername: net.isIP(host) ? undefined : host, ...o.tls }, () => resolve(s));
    s.once('error', reject);
  });
}

function tlsFacts(s: tls.TLSSocket): NonNullable<SmtpProbeResult['tls']> {
  return { protocol: s.getProtocol(), cipher: s.getCipher()?.name, certificateTrusted: s.authorized };
}

const short = (r: Reply): string => `${r.code} ${r.lines.join(' ')}`.slice(0, 200);
const ehloName = (): string => os.hostname().replace(/[^A-Za-z0-9.-]/g, '') || 'localhost';

async function ehlo(c: Conversation): Promise<string[]> {
  const r = await c.send(`EHLO ${ehloName()}`);
  if (r.code !== 250) throw new Error(`EHLO refused: ${short(r)}`);
  return r.lines.slice(1).map((l) => l.trim());
}

function mechanisms(ext: string[]): string[] {
  const line = ext.find((e) => /^AUTH[ =]/i.test(e));
  return line ? line.slice(5).trim().toUpperCase().split(/\s+/).filter(Boolean) : [];
}

async function authenticate(c: Conversation, user: string, pass: string, mechs: string[]): Promise<Reply> {
  if (mechs.includes('PLAIN')) return c.send(`AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString('base64')}`);
  const r = await c.send('AUTH LOGIN');
  if (r.code !== 334) return r;
  const r2 = await c.send(Buffer.from(user).toString('base64'));
  if (r2.code !== 334) return r2;
  return c.send(Buffer.from(pass).toString('base64'));
}

/** Runs the probe; never throws (failures are in `error`, `ok` false). */
export async function probeSmtp(s: SmtpSettings, o: SmtpProbeOptions = {}): Promise<SmtpProbeResult> {
  const host = s.smtpHost ?? '';
  const port = Number(s.smtpPort || 587);
  const mode = (s.smtpSecure || 'starttls').toLowerCase();
  const t0 = performance.now();
  const out: SmtpProbeResult = {
    ok: false,
    host,
    port,
    mode,
    connected: false,
    auth: 'not attempted',
    willUse: '',
    latencyMs: 0,
  };
  const c = new Conversation();
  let timer: NodeJS.Timeout | undefined;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const talk = async (): Promise<void> => {
    const sock = await connect(host, port, mode === 'tls', o);
    out.connected = true;
    c.attach(sock);
    if (mode === 'tls') out.tls = tlsFacts(sock as tls.TLSSocket);
    const greet = await c.read();
    out.greeting = short(greet);
    if (greet.code !== 220) throw new Error(`server refused the session: ${short(greet)}`);
    let ext = await ehlo(c);
    out.extensions = ext;
    out.starttlsOffered = ext.some((e) => e.toUpperCase() === 'STARTTLS');
    if (mode === 'starttls') {
      if (!out.starttlsOffered) {
        out.willUse =
          'nothing: smtpSecure starttls requires STARTTLS and this server does not offer it; every send will fail. ' +
          'For a plain relay set smtpSecure none (mail then travels unencrypted)';
        return;
      }
      const r = await c.send('STARTTLS');
      if (r.code !== 220) throw new Error(`STARTTLS refused: ${short(r)}`);
      c.detach();
      const secured = await upgrade(c.socket, host, o);
      c.attach(secured);
      out.tls = tlsFacts(secured);
      ext = await ehlo(c);
    }
    out.authMechanisms = mechanisms(ext);
    if (s.smtpUser) {
      if (out.authMechanisms.length === 0) out.auth = 'not offered';
      else {
        const r = await authenticate(c, s.smtpUser, s.smtpPassword ?? '', out.authMechanisms);
        out.auth = r.code === 235 ? 'accepted' : 'rejected';
        out.authReply = short(r);
      }
    }
    await c.send('QUIT').catch(() => undefined);
    const transport =
      mode === 'tls'
        ? 'implicit TLS'
        : mode === 'starttls'
          ? 'STARTTLS (encrypted)'
          : 'a plain, unencrypted connection';
    const login = !s.smtpUser ? 'no login' : out.auth === 'accepted' ? `login as ${s.smtpUser}` : '';
    if (s.smtpUser && out.auth !== 'accepted') {
      out.willUse = `nothing: authentication as ${s.smtpUser} ${out.auth === 'rejected' ? 'was rejected' : 'is not offered by the server'}`;
      return;
    }
    out.ok = true;
    out.willUse = `${transport} to ${host}:${port}, ${login}`;
    if (mode === 'none' && out.starttlsOffered)
      out.willUse += ' (the server offers STARTTLS: smtpSecure starttls would encrypt)';
  };
  try {
    await Promise.race([talk(), timeout]);
  } catch (e) {
    const err = e as { code?: string; message?: string };
    out.error = (err.code ? `${err.code}: ` : '') + (err.message ?? 'failed').slice(0, 200);
    out.willUse = `nothing: ${out.error}`;
    out.ok = false;
  } finally {
    clearTimeout(timer);
    c.socket?.destroy();
    out.latencyMs = Math.round(performance.now() - t0);
  }
  return out;
}
