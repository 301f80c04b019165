/**
 * `caCert` of url and api monitors: PEM CA certificates trusted in addition to the system store, so a monitor can
 * check a service whose certificate comes from a private CA (its own mTLS services, an internal PKI) without turning
 * verification off. Validated at create/update (certificates only, at most MAX_CA_CERTS of them, MAX_CA_PEM_CHARS in
 * all, each must parse); at run time the TLS context (system roots + these, and the client certificate when one is
 * sent) is built once per distinct input and reused, since building one from the ~140 system roots costs ~150 ms.
 */
import { createHash, X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { AppError } from '../../../core/errors.js';

export const MAX_CA_PEM_CHARS = 64 * 1024;
export const MAX_CA_CERTS = 20;
const BLOCK_RE = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

/** Throws 400 naming `field` unless `pem` is 1–20 PEM certificates and nothing else. Returns the blocks. */
export function validateCaCert(pem: string, field = 'caCert'): string[] {
  if (pem.length > MAX_CA_PEM_CHARS)
    throw AppError.badRequest(`${field} is longer than ${MAX_CA_PEM_CHARS} characters`, field);
  const blocks = pem.match(BLOCK_RE) ?? [];
  const rest = pem.replace(BLOCK_RE, '').trim();
  if (blocks.length === 0 || rest !== '')
    throw AppError.badRequest(
      `${field} must be PEM certificates (-----BEGIN CERTIFICATE----- …) and nothing else`,
      field,
    );
  if (blocks.length > MAX_CA_CERTS)
    throw AppError.badRequest(`${field} holds more than ${MAX_CA_CERTS} certificates`, field);
  for (const [i, b] of blocks.entries()) {
    try {
      new X509Certificate(b);
    } catch {
      throw AppError.badRequest(`${field}: certificate ${i + 1} does not parse`, field);
    }
  }
  return blocks;
}

const MAX_CONTEXTS = 100;
const contexts = new Map<string, tls.SecureContext>();

/** The TLS context trusting the system roots plus `caPem` (and presenting `client` when given), cached (LRU). */
export function trustContext(
  caPem: string,
  client?: { cert: string | Buffer; key: string | Buffer },
): tls.SecureContext {
  const h = createHash('sha256').update(caPem);
  if (client) h.update('\0').update(client.cert).update('\0').update(client.key);
  const key = h.digest('hex');
  let ctx = contexts.get(key);
  if (ctx !== undefined) {
    contexts.delete(key);
    contexts.set(key, ctx);
    return ctx;
  }
  ctx = tls.createSecureContext({
    ca: [...tls.rootCertificates, ...(caPem.match(BLOCK_RE) ?? [])],
    ...(client ? { cert: client.cert, key: client.key } : {}),
  });
  contexts.set(key, ctx);
  if (contexts.size > MAX_CONTEXTS) contexts.delete(contexts.keys().next().value!);
  return ctx;
}
