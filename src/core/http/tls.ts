/**
 * Mutual TLS: the server presents server.pem and accepts only clients whose certificate the CA in ca.pem signed
 * (refused at the handshake otherwise). `reload` re-reads the folder and swaps the secure context; connections in
 * flight keep the context they started with, new ones get the new one, so nothing in flight is dropped.
 */
import fs from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { Server } from 'node:https';
import { CERT_FILES } from '../pki/certs.js';
import { AppError } from '../errors.js';

export interface TlsFiles {
  key: string;
  cert: string;
  ca: string;
}

export function readTlsFiles(certDir: string): TlsFiles {
  const read = (name: string) => fs.readFileSync(path.join(certDir, name), 'utf8');
  return { key: read(CERT_FILES.serverKey), cert: read(CERT_FILES.server), ca: read(CERT_FILES.ca) };
}

export function httpsOptions(files: TlsFiles) {
  return {
    ...files,
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2' as const,
  };
}

export function reloadCertificates(server: Server, certDir: string): { notAfter: string; subject: string } {
  let files: TlsFiles;
  try {
    files = readTlsFiles(certDir);
    tls.createSecureContext(files); // validates that key and certificate belong together
  } catch (e) {
    throw new AppError('BAD_REQUEST', `certificates in the folder are unusable: ${(e as Error).message}`);
  }
  server.setSecureContext(httpsOptions(files));
  const x = new X509Certificate(files.cert);
  return { notAfter: new Date(x.validTo).toISOString(), subject: x.subject };
}
