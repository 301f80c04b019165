/**
 * TLS on a connected TCP socket, for certificate checks on any TLS port: `tls` (implicit TLS from the first byte) or
 * the protocol's STARTTLS upgrade — SMTP (EHLO, STARTTLS), IMAP (STARTTLS), POP3 (STLS), LDAP (the StartTLS extended
 * operation), PostgreSQL (SSLRequest) and MySQL/MariaDB (the handshake's CLIENT_SSL flag and SSLRequest packet).
 * Each dialogue reads at most 16 KiB and ends at the caller's signal. The handshake does not reject an untrusted or
 * expired chain by itself: the caller gets the certificate and the verification error, and decides.
 */
import type net from 'node:net';
import tls, { type PeerCertificate, type TLSSocket } from 'node:tls';

export const TLS_MODES = ['off', 'tls', 'smtp', 'imap', 'pop3', 'ldap', 'postgres', 'mysql'] as const;
export type TlsMode = (typeof TLS_MODES)[number];

const MAX_DIALOGUE_BYTES = 16 * 1024;

/** Collects bytes from the socket until `done(buffer)` returns true; fails on close, error or too much data. */
function readUntil(socket: net.Socket, done: (b: Buffer) => boolean, what: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('error', onError);
    };
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length > MAX_DIALOGUE_BYTES) return fail(new Error(`${what}: more than 16 KiB without an answer`));
      if (done(buf)) {
        cleanup();
        resolve(buf);
      }
    };
    const fail = (e: Error) => {
      cleanup();
      reject(e);
    };
    const onClose = () => fail(new Error(`${what}: the server closed the connection`));
    const onError = (e: Error) => fail(e);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.once('error', onError);
  });
}

const lines = (b: Buffer) => b.toString('latin1').split('\r\n');
/** A complete SMTP reply: its last line is `ddd ` (a space after the code). */
const smtpReply = (b: Buffer) => lines(b).some((l) => /^\d{3} /.test(l));
const crlf = (b: Buffer) => b.includes('\r\n');

async function expect(s: net.Socket, done: (b: Buffer) => boolean, ok: (t: string) => boolean, what: string) {
  const text = (await readUntil(s, done, what)).toString('latin1');
  if (!ok(text)) throw new Error(`${what}: ${text.trim().split('\r\n').pop()?.slice(0, 200) ?? 'no answer'}`);
  return text;
}

const DIALOGUES: Record<Exclude<TlsMode, 'off' | 'tls'>, (s: net.Socket) => Promise<void>> = {
  async smtp(s) {
    await expect(s, smtpReply, (t) => t.startsWith('220'), 'SMTP greeting');
    s.write('EHLO sentinel.invalid\r\n');
    const ehlo = await expect(s, smtpReply, (t) => t.startsWith('250'), 'SMTP EHLO');
    if (!/^250[- ]STARTTLS\b/im.test(ehlo)) throw new Error('SMTP: the server does not offer STARTTLS');
    s.write('STARTTLS\r\n');
    await expect(s, smtpReply, (t) => t.startsWith('220'), 'SMTP STARTTLS');
  },
  async imap(s) {
    await expect(s, crlf, (t) => /^\* (OK|PREAUTH)/i.test(t), 'IMAP greeting');
    s.write('a1 STARTTLS\r\n');
    const tagged = (b: Buffer) => /(^|\r\n)a1 [^\r\n]*\r\n/.test(b.toString('latin1'));
    await expect(s, tagged, (t) => /(^|\r\n)a1 OK/i.test(t), 'IMAP STARTTLS');
  },
  async pop3(s) {
    await expect(s, crlf, (t) => t.startsWith('+OK'), 'POP3 greeting');
    s.write('STLS\r\n');
    await expect(s, crlf, (t) => t.startsWith('+OK'), 'POP3 STLS');
  },
  async ldap(s) {
    // ExtendedRequest, messageID 1, requestName 1.3.6.1.4.1.1466.20037 (StartTLS), RFC 4511 §4.14.
    const oid = Buffer.from('1.3.6.1.4.1.1466.20037', 'latin1');
    const ext = Buffer.concat([Buffer.from([0x80, oid.length]), oid]);
    const op = Buffer.concat([Buffer.from([0x77, ext.length]), ext]);
    const body = Buffer.concat([Buffer.from([0x02, 0x01, 0x01]), op]);
    s.write(Buffer.concat([Buffer.from([0x30, body.length]), body]));
    const r = await readUntil(s, (b) => b.length >= 2 && b.length >= 2 + b[1]!, 'LDAP StartTLS');
    // ExtendedResponse [APPLICATION 24] whose first element is resultCode ENUMERATED: 0 = success.
    const at = r.indexOf(0x78);
    const code = at >= 0 ? r.indexOf(Buffer.from([0x0a, 0x01]), at) : -1;
    if (code < 0 || r[code + 2] !== 0) throw new Error('LDAP: the server refused StartTLS');
  },
  async postgres(s) {
    const req = Buffer.alloc(8);
    req.writeInt32BE(8, 0);
    req.writeInt32BE(80877103, 4); // SSLRequest
    s.write(req);
    const r = await readUntil(s, (b) => b.length >= 1, 'PostgreSQL SSLRequest');
    if (r[0] !== 0x53) throw new Error('PostgreSQL: the server does not accept SSL (answered N)');
  },
  async mysql(s) {
    const hello = await readUntil(s, (b) => b.length >= 4 && b.length >= 4 + b.readUIntLE(0, 3), 'MySQL handshake');
    const p = hello.subarray(4);
    if (p[0] === 0xff) throw new Error(`MySQL: ${p.subarray(3).toString('latin1').slice(0, 200)}`);
    const verEnd = p.indexOf(0, 1);
    const capsAt = verEnd + 1 + 4 + 8 + 1; // after version, connection id, auth data part 1, filler
    const capsLow = verEnd > 0 && p.length >= capsAt + 2 ? p.readUInt16LE(capsAt) : 0;
    if (!(capsLow & 0x0800)) throw new Error('MySQL: the server does not offer SSL');
    // SSLRequest: CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION, max packet, utf8mb4, 23 zero bytes.
    const payload = Buffer.alloc(32);
    payload.writeUInt32LE(0x0200 | 0x0800 | 0x8000, 0);
    payload.writeUInt32LE(16 * 1024 * 1024, 4);
    payload[8] = 45;
    s.write(Buffer.concat([Buffer.from([32, 0, 0, hello[3]! + 1]), payload]));
  },
};

export interface TlsOutcome {
  socket: TLSSocket;
  cert?: PeerCertificate;
  /** The chain's verification error code (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, …), when there is one. */
  authorizationError?: string;
  protocol?: string | null;
}

/** Runs the mode's dialogue on the connected socket, then the TLS handshake (SNI = host unless it is an address). */
export async function upgradeToTls(
  socket: net.Socket,
  mode: Exclude<TlsMode, 'off'>,
  host: string,
): Promise<TlsOutcome> {
  if (mode !== 'tls') await DIALOGUES[mode](socket);
  const servername = /^[\d.]+$|:/.test(host) ? undefined : host;
  return new Promise((resolve, reject) => {
    const t = tls.connect({ socket, servername, rejectUnauthorized: false }, () => {
      const err = t.authorizationError as (Error & { code?: string }) | string | null;
      resolve({
        socket: t,
        cert: t.getPeerCertificate(),
        authorizationError: err ? String(typeof err === 'string' ? err : (err.code ?? err.message)) : undefined,
        protocol: t.getProtocol(),
      });
    });
    t.once('error', reject);
  });
}
