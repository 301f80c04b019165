/**
 * api client certificates (mTLS). `clientCert` / `clientCertKey` hold either the PEM text itself (uploaded through
 * the API, sealed at rest as secrets of the api type) or the name of a file in `<DATA_DIR>/client-certs/` that an
 * administrator put there. Nothing else is read: a file name is resolved with realpath and must stay inside that
 * folder (no `..`, no symlink out), be a regular file (opened O_NONBLOCK | O_NOFOLLOW, checked with fstat, so a FIFO
 * or a device is never read from) and hold at most 64 KiB. Errors are one generic message naming the field; they
 * never say whether or why a path exists. Create/update checks that the two parse as a certificate and its key.
 */
import { constants, openSync, closeSync, fstatSync, readSync, realpathSync } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import path from 'node:path';
import { AppError } from '../../../core/errors.js';

export const CLIENT_CERT_DIR = 'client-certs';
export const MAX_CLIENT_CERT_BYTES = 64 * 1024;

type Source = { pem: Buffer } | { file: string };
type Field = 'clientCert' | 'clientCertKey';

// Plain names and relative paths of plain names: no '.' or '..' segment, no leading '/', nothing but [A-Za-z0-9._-].
const FILE_NAME_RE = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._-]{1,255}(?:\/[A-Za-z0-9._-]{1,255}){0,7}$/;
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

function sourceOf(value: string, field: Field): Source {
  const v = value.trim();
  if (v.startsWith('-----BEGIN ')) {
    const pem = Buffer.from(v, 'utf8');
    if (pem.length > MAX_CLIENT_CERT_BYTES)
      throw AppError.badRequest(`${field}: the PEM text is larger than 64 KiB`, field);
    return { pem };
  }
  if (FILE_NAME_RE.test(v)) return { file: v };
  throw AppError.badRequest(
    `${field} must be the PEM text itself ("-----BEGIN …", at most 64 KiB) or the name of a file in ` +
      `<DATA_DIR>/${CLIENT_CERT_DIR}/ (e.g. "billing.pem"); other server paths are not read`,
    field,
  );
}

function unreadable(field: Field, name: string): AppError {
  return AppError.badRequest(
    `${field}: no readable regular file of at most 64 KiB named "${name}" in <DATA_DIR>/${CLIENT_CERT_DIR}/`,
    field,
  );
}

function inside(dir: string, real: string): boolean {
  return real.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}

function readConfinedSync(dir: string | undefined, name: string, field: Field): Buffer {
  if (!dir) throw unreadable(field, name);
  let fd: number | undefined;
  try {
    const realDir = realpathSync(dir);
    const real = realpathSync(path.join(realDir, name));
    if (!inside(realDir, real)) throw unreadable(field, name);
    fd = openSync(real, OPEN_FLAGS);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_CLIENT_CERT_BYTES) throw unreadable(field, name);
    const buf = Buffer.alloc(MAX_CLIENT_CERT_BYTES + 1);
    const n = readSync(fd, buf, 0, buf.length, 0);
    if (n > MAX_CLIENT_CERT_BYTES) throw unreadable(field, name);
    return buf.subarray(0, n);
  } catch (e) {
    throw e instanceof AppError ? e : unreadable(field, name);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function readConfined(dir: string | undefined, name: string, field: Field): Promise<Buffer> {
  if (!dir) throw unreadable(field, name);
  const realDir = await realpath(dir).catch(() => undefined);
  const real = realDir && (await realpath(path.join(realDir, name)).catch(() => undefined));
  if (!realDir || !real || !inside(realDir, real)) throw unreadable(field, name);
  const fh = await open(real, OPEN_FLAGS).catch(() => undefined);
  if (!fh) throw unreadable(field, name);
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > MAX_CLIENT_CERT_BYTES) throw unreadable(field, name);
    const buf = Buffer.alloc(MAX_CLIENT_CERT_BYTES + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead > MAX_CLIENT_CERT_BYTES) throw unreadable(field, name);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Create/update: both values are PEM or confined file names, and they parse as a certificate and its private key. */
export function validateClientCert(cert: string, key: string, dir: string | undefined): void {
  const load = (v: string, f: Field): Buffer => {
    const s = sourceOf(v, f);
    return 'pem' in s ? s.pem : readConfinedSync(dir, s.file, f);
  };
  const certPem = load(cert, 'clientCert');
  const keyPem = load(key, 'clientCertKey');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(certPem);
  } catch {
    throw AppError.badRequest('clientCert is not a PEM certificate ("-----BEGIN CERTIFICATE-----")', 'clientCert');
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch {
    throw AppError.badRequest(
      'clientCertKey is not an unencrypted PEM private key ("-----BEGIN PRIVATE KEY-----", RSA or EC)',
      'clientCertKey',
    );
  }
  if (!x509.checkPrivateKey(privateKey))
    throw AppError.badRequest("clientCertKey is not the private key of clientCert's certificate", 'clientCertKey');
}

/** Run time: the PEM pair, or a message naming the field (a stored value this version no longer reads, a file gone). */
export async function loadClientCert(
  cert: string,
  key: string,
  dir: string | undefined,
): Promise<{ cert: Buffer; key: Buffer } | string> {
  try {
    const load = async (v: string, f: Field): Promise<Buffer> => {
      const s = sourceOf(v, f);
      return 'pem' in s ? s.pem : readConfined(dir, s.file, f);
    };
    const [c, k] = await Promise.all([load(cert, 'clientCert'), load(key, 'clientCertKey')]);
    return { cert: c, key: k };
  } catch (e) {
    return e instanceof AppError ? e.message : 'client certificate unreadable';
  }
}
