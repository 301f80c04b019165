/**
 * JWT (RS256) issue and verification for one service. The RSA key is generated on first start into
 * `<DATA_DIR>/<service>-jwt-key.pem` (0600) and reused, so tokens survive restarts. Verification pins RS256 and checks
 * exp, issuer and audience (each service has its own, so a monitor token is refused by the agent and vice versa), then
 * that the token not revoked and still bound to the user's account (uid and token version, see UserService). Verified tokens are cached (bounded) so a request costs a
 * map lookup, not an RSA verification.
 * Tracked kinds (the long-lived ones) are recorded in the `tokens` bucket with their id (jti) and can be listed and
 * revoked by an admin.
 * Refresh (security §13) rotates: the new token keeps the original authentication time (`authMs` claim) so refreshes
 * never pass the kind's session cap, and the old token is retired in the `revoked-tokens` bucket (id → when it stops,
 * when it would have expired anyway) after a grace of REFRESH_GRACE_MS for requests already in flight with it.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  hkdfSync,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { promisify } from 'node:util';
import type { Bucket, KvStore } from '../storage/kv-store.js';
import { AppError } from '../errors.js';
import { lifetimeEndMs, sessionCapMs, type TokenKindSpec } from './token-kinds.js';

export { type TokenKindSpec } from './token-kinds.js';

let joseLib: Promise<typeof import('jose')> | undefined;
/** jose (46 modules) loads at the first token issued or verified, not at start (decision 91). */
const jose = () => (joseLib ??= import('jose'));

/** How long a token replaced by a refresh keeps working (requests already sent with it, concurrent refreshes). */
export const REFRESH_GRACE_MS = 30_000;

export interface TokenClaims {
  username: string;
  kind: string;
  jti: string;
  issuedMs: number;
  expiresMs: number;
  /** The account's uid and tokenVersion when issued (absent in tokens issued before token binding). */
  uid?: string;
  tv?: number;
  /** When the user typed the password this token descends from (= issuedMs for a login). */
  authMs: number;
}

interface RetiredToken {
  id: string;
  /** The token is refused from this moment on. */
  notAfterMs: number;
  /** Its own expiry: the record is useless (and swept) after it. */
  expiresMs: number;
}

/** Whom a token is issued to: the account's identity and current token version. */
export interface TokenSubject {
  username: string;
  uid: string;
  tokenVersion: number;
}

export interface TrackedToken {
  id: string;
  username: string;
  kind: string;
  issuedMs: number;
  expiresMs: number;
  revoked: boolean;
  revokedMs?: number;
  /** Set when a refresh replaced it (the id of the new token). */
  replacedBy?: string;
}

export interface IssuedToken {
  token: string;
  expire: string;
  expiresMs: number;
  id: string;
}

const CACHE_MAX = 20_000;

function writeKey(file: string, privateKey: KeyObject): void {
  try {
    fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

function loadOrCreateKey(file: string): KeyObject {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) writeKey(file, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
  return createPrivateKey(fs.readFileSync(file, 'utf8'));
}

/**
 * Makes the key file when it is missing (a first start), generating the RSA key on the thread pool so the caller
 * can go on meanwhile (the store opening); the TokenService then only reads it.
 */
export async function ensureTokenKey(file: string): Promise<void> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (fs.existsSync(file)) return;
  const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  writeKey(file, privateKey);
}

export class TokenService {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly bucket: Bucket;
  private readonly retiredBucket: Bucket;
  private readonly revoked = new Set<string>();
  /** Tokens replaced by a refresh and not yet expired. */
  private readonly retired = new Map<string, RetiredToken>();
  private readonly cache = new Map<string, TokenClaims>();

  constructor(
    private readonly store: KvStore,
    keyFile: string,
    private readonly issuer: string,
    private readonly audience: string,
    readonly kinds: Record<string, TokenKindSpec>,
    /** The user service's check that the token's user, uid and version are current. */
    private readonly isBound: (claims: TokenClaims) => boolean,
    private readonly now: () => number = Date.now,
  ) {
    this.privateKey = loadOrCreateKey(keyFile);
    this.publicKey = createPublicKey(this.privateKey);
    this.bucket = store.bucket('tokens');
    this.retiredBucket = store.bucket('revoked-tokens');
  }

  /**
   * A 32-byte key derived from the signing key for one purpose (`label`): instances sharing the signing key (a cluster)
   * derive the same key; it reveals nothing of the signing key, and each label's key is unrelated to the others'.
   */
  derivedKey(label: string): Buffer {
    const ikm = this.privateKey.export({ type: 'pkcs8', format: 'der' });
    return Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), label, 32));
  }

  /** Loads revocations and retirements, and follows the ones other instances make (docs/cluster.md). */
  async load(): Promise<void> {
    this.store.watch('tokens', async (k) => {
      if (k === undefined) return this.loadRevoked();
      const rec = await this.bucket.get<TrackedToken>(k);
      if (rec?.revoked && !rec.replacedBy) this.revoked.add(rec.id);
    });
    this.store.watch('revoked-tokens', async (k) => {
      if (k === undefined) return this.loadRetired();
      const rec = await this.retiredBucket.get<RetiredToken>(k);
      if (rec) this.retired.set(rec.id, rec);
      else this.retired.delete(String(k));
    });
    await this.loadRevoked();
    await this.loadRetired();
    await this.sweepRetired(this.now());
  }

  private async loadRevoked(): Promise<void> {
    for await (const { value } of this.bucket.range<TrackedToken>()) {
      if (value.revoked && !value.replacedBy) this.revoked.add(value.id);
    }
  }

  private async loadRetired(): Promise<void> {
    for await (const { value } of this.retiredBucket.range<RetiredToken>()) this.retired.set(value.id, value);
  }

  /** A new token; `authMs` (a refresh) keeps the original authentication time and so the session cap. */
  async issue(subject: TokenSubject, kind: string, authMs?: number): Promise<IssuedToken> {
    const spec = this.kinds[kind];
    if (!spec) throw new AppError('INTERNAL', `unknown token kind ${kind}`);
    const { username } = subject;
    const issuedMs = this.now();
    const auth = authMs ?? issuedMs;
    const expiresMs = Math.min(lifetimeEndMs(spec, issuedMs), sessionCapMs(spec, auth));
    if (expiresMs - issuedMs < 1000) throw AppError.unauthorized('the session reached its longest lifetime: log in');
    const id = randomUUID();
    const { SignJWT } = await jose();
    const token = await new SignJWT({ kind, iatMs: issuedMs, authMs: auth, uid: subject.uid, tv: subject.tokenVersion })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setSubject(username)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setJti(id)
      .setIssuedAt(Math.floor(issuedMs / 1000))
      .setExpirationTime(Math.floor(expiresMs / 1000))
      .sign(this.privateKey);
    if (spec.tracked) {
      const rec: TrackedToken = { id, username, kind, issuedMs, expiresMs, revoked: false };
      await this.bucket.put(id, rec);
    }
    return { token, expire: new Date(Math.floor(expiresMs / 1000) * 1000).toISOString(), expiresMs, id };
  }

  async verify(token: string): Promise<TokenClaims> {
    let claims = this.cache.get(token);
    if (!claims) {
      claims = await this.verifySignature(token);
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(token, claims);
    }
    if (claims.expiresMs <= this.now()) {
      this.cache.delete(token);
      throw AppError.unauthorized('token expired');
    }
    if (this.revoked.has(claims.jti)) throw AppError.unauthorized('token revoked');
    const retired = this.retired.get(claims.jti);
    if (retired && this.now() >= retired.notAfterMs) {
      throw AppError.unauthorized('token replaced by a refresh: use the new one');
    }
    if (!this.isBound(claims)) throw AppError.unauthorized('user disabled, deleted or changed');
    return claims;
  }

  private async verifySignature(token: string): Promise<TokenClaims> {
    const { jwtVerify } = await jose();
    try {
      const { payload } = await jwtVerify(token, this.publicKey, {
        algorithms: ['RS256'],
        issuer: this.issuer,
        audience: this.audience,
        requiredClaims: ['exp', 'sub', 'jti'],
        currentDate: new Date(this.now()),
      });
      const kind = typeof payload.kind === 'string' ? payload.kind : '';
      if (!this.kinds[kind]) throw new Error('unknown kind');
      const issuedMs = typeof payload.iatMs === 'number' ? payload.iatMs : (payload.iat ?? 0) * 1000;
      return {
        username: payload.sub!,
        kind,
        jti: payload.jti!,
        expiresMs: payload.exp! * 1000,
        issuedMs,
        uid: typeof payload.uid === 'string' ? payload.uid : undefined,
        tv: typeof payload.tv === 'number' ? payload.tv : undefined,
        authMs: typeof payload.authMs === 'number' ? payload.authMs : issuedMs,
      };
    } catch {
      throw AppError.unauthorized('invalid or expired token');
    }
  }

  /**
   * Rotation: a new token of the same kind for the same session (its original authMs), and the old one retired after
   * the grace. Tracked tokens: the old record says revoked and which token replaced it.
   */
  async refresh(claims: TokenClaims, subject: TokenSubject): Promise<IssuedToken> {
    const next = await this.issue(subject, claims.kind, claims.authMs);
    const now = this.now();
    const rec: RetiredToken = { id: claims.jti, notAfterMs: now + REFRESH_GRACE_MS, expiresMs: claims.expiresMs };
    if (!this.retired.has(rec.id)) {
      await this.retiredBucket.put(rec.id, rec);
      this.retired.set(rec.id, rec);
    }
    if (this.kinds[claims.kind]?.tracked) {
      const old = await this.bucket.get<TrackedToken>(claims.jti);
      if (old && !old.revoked) {
        await this.bucket.put(old.id, { ...old, revoked: true, revokedMs: rec.notAfterMs, replacedBy: next.id });
      }
    }
    if (this.retired.size % 1000 === 0) await this.sweepRetired(now);
    return next;
  }

  /** Forgets retired tokens that have expired anyway (at start and every 1000 refreshes). */
  private async sweepRetired(now: number): Promise<void> {
    for (const r of [...this.retired.values()]) {
      if (r.expiresMs > now) continue;
      this.retired.delete(r.id);
      await this.retiredBucket.delete(r.id);
    }
  }

  async list(): Promise<TrackedToken[]> {
    const out: TrackedToken[] = [];
    for await (const { value } of this.bucket.range<TrackedToken>()) out.push(value);
    return out.sort((a, b) => b.issuedMs - a.issuedMs);
  }

  async revoke(id: string): Promise<TrackedToken> {
    const rec = await this.bucket.get<TrackedToken>(id);
    if (!rec) throw AppError.notFound(`token ${id} not found`);
    const next = { ...rec, revoked: true, revokedMs: this.now() };
    await this.bucket.put(id, next);
    this.revoked.add(id);
    return next;
  }
}
