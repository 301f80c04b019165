/**
 * Certificates for mutual TLS. On first start `ensureCertificates(dir)` writes, when missing:
 * ca.pem / ca-key.pem (the project CA), server.pem / server-key.pem (SANs localhost, 127.0.0.1, ::1, the host name),
 * client.pem / client-key.pem (clientAuth) and client.p12 (for browsers; its password in client.p12.password).
 * Keys are written 0600. A user may replace any file with their own; nothing is regenerated while files exist.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, webcrypto } from 'node:crypto';
import { DAY_MS } from '../time.js';

type X509Lib = typeof import('@peculiar/x509');
let x509Lib: Promise<X509Lib> | undefined;

/** The certificate libraries load only when certificates are made (first start, tests): ~15 MB a service saves. */
function loadX509(): Promise<X509Lib> {
  x509Lib ??= (async () => {
    await import('reflect-metadata');
    const lib = await import('@peculiar/x509');
    lib.cryptoProvider.set(webcrypto as unknown as Crypto);
    return lib;
  })();
  return x509Lib;
}

const ALG = {
  name: 'RSASSA-PKCS1-v1_5',
  hash: 'SHA-256',
  publicExponent: new Uint8Array([1, 0, 1]),
  modulusLength: 2048,
};

export interface Pem {
  cert: string;
  key: string;
}
export interface Pki {
  ca: Pem;
  server: Pem;
  client: Pem;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  const b64 = Buffer.from(der)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n');
  return `-----BEGIN PRIVATE KEY-----\n${b64.trimEnd()}\n-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const b64 = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  return webcrypto.subtle.importKey('pkcs8', Buffer.from(b64, 'base64'), ALG, true, ['sign']);
}

function serial(): string {
  const b = randomBytes(16);
  b[0]! &= 0x7f;
  return b.toString('hex');
}

export async function createCa(commonName = 'Sentinel Monitoring CA', years = 10): Promise<Pem> {
  const x509 = await loadX509();
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + years * 365 * DAY_MS),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await keyPem(keys.privateKey) };
}

export interface LeafOptions {
  commonName: string;
  kind: 'server' | 'client';
  dnsNames?: string[];
  ips?: string[];
  days?: number;
  /** Validity start (default: a day ago), for tests that need an expiring or expired certificate. */
  notBeforeMs?: number;
}

export async function issueCert(ca: Pem, opts: LeafOptions): Promise<Pem> {
  const x509 = await loadX509();
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await importKey(ca.key);
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const notBefore = opts.notBeforeMs ?? Date.now() - DAY_MS;
  const names = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const eku = opts.kind === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${opts.commonName}`,
    issuer: caCert.subject,
    notBefore: new Date(notBefore),
    notAfter: new Date(notBefore + (opts.days ?? 825) * DAY_MS),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([eku]),
      ...(names.length ? [new x509.SubjectAlternativeNameExtension(names)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { cert: cert.toString('pem') + '\n', key: await keyPem(keys.privateKey) };
}

/** A full PKI in memory (tests use this; `ensureCertificates` persists one). */
export async function createPki(opts: { hostNames?: string[] } = {}): Promise<Pki> {
  const ca = await createCa();
  const server = await issueCert(ca, {
    commonName: 'localhost',
    kind: 'server',
    dnsNames: ['localhost', ...(opts.hostNames ?? [])],
    ips: ['127.0.0.1', '::1'],
  });
  const client = await issueCert(ca, { commonName: 'sentinel-client', kind: 'client' });
  return { ca, server, client };
}

/** PKCS#12 (AES-256) bundle of a client certificate, its key and the CA, for importing into a browser. */
export async function toPkcs12(client: Pem, ca: Pem, password: string): Promise<Buffer> {
  const { default: forge } = await import('node-forge');
  const key = forge.pki.privateKeyFromPem(client.key);
  const certs = [forge.pki.certificateFromPem(client.cert), forge.pki.certificateFromPem(ca.cert)];
  const asn1 = forge.pkcs12.toPkcs12Asn1(key, certs, password, {
    algorithm: 'aes256',
    friendlyName: 'sentinel-client',
  });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}

export const CERT_FILES = {
  ca: 'ca.pem',
  caKey: 'ca-key.pem',
  server: 'server.pem',
  serverKey: 'server-key.pem',
  client: 'client.pem',
  clientKey: 'client-key.pem',
  clientP12: 'client.p12',
  clientP12Password: 'client.p12.password',
} as const;

function writeExclusive(file: string, data: string | Buffer, mode: number): void {
  try {
    fs.writeFileSync(file, data, { mode, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/**
 * Makes sure every certificate file exists in `dir`. Safe when both services start at the same moment: a lock
 * directory serialises generation, and files are created exclusively.
 */
export async function ensureCertificates(dir: string): Promise<{ created: boolean }> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = (name: string) => path.join(dir, name);
  if (Object.values(CERT_FILES).every((n) => fs.existsSync(f(n)))) return { created: false };
  const lock = f('.generating');
  for (let i = 0; ; i++) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (i > 300) fs.rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    if (Object.values(CERT_FILES).every((n) => fs.existsSync(f(n)))) return { created: false };
    let ca: Pem;
    if (fs.existsSync(f(CERT_FILES.ca)) && fs.existsSync(f(CERT_FILES.caKey))) {
      ca = { cert: fs.readFileSync(f(CERT_FILES.ca), 'utf8'), key: fs.readFileSync(f(CERT_FILES.caKey), 'utf8') };
    } else {
      ca = await createCa();
      writeExclusive(f(CERT_FILES.caKey), ca.key, 0o600);
      writeExclusive(f(CERT_FILES.ca), ca.cert, 0o600);
    }
    if (!fs.existsSync(f(CERT_FILES.server))) {
      const hostname = os.hostname();
      const server = await issueCert(ca, {
        commonName: 'localhost',
        kind: 'server',
        dnsNames: ['localhost', ...(hostname && hostname !== 'localhost' ? [hostname] : [])],
        ips: ['127.0.0.1', '::1'],
      });
      writeExclusive(f(CERT_FILES.serverKey), server.key, 0o600);
      writeExclusive(f(CERT_FILES.server), server.cert, 0o600);
    }
    if (!fs.existsSync(f(CERT_FILES.client)) || !fs.existsSync(f(CERT_FILES.clientP12))) {
      const client = fs.existsSync(f(CERT_FILES.client))
        ? { cert: fs.readFileSync(f(CERT_FILES.client), 'utf8'), key: fs.readFileSync(f(CERT_FILES.clientKey), 'utf8') }
        : await issueCert(ca, { commonName: 'sentinel-client', kind: 'client' });
      writeExclusive(f(CERT_FILES.clientKey), client.key, 0o600);
      writeExclusive(f(CERT_FILES.client), client.cert, 0o600);
      const password = randomBytes(12).toString('base64url');
      writeExclusive(f(CERT_FILES.clientP12Password), password + '\n', 0o600);
      const pw = fs.readFileSync(f(CERT_FILES.clientP12Password), 'utf8').trim();
      writeExclusive(f(CERT_FILES.clientP12), await toPkcs12(client, ca, pw), 0o600);
    }
    return { created: true };
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
