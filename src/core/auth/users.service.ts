/**
 * Users of one service: kept in the store's `users` bucket (key = username), mirrored in memory (users are few and
 * every authenticated request checks its user is still enabled). Passwords are argon2id hashes; the API never returns
 * them. The last enabled admin cannot be deleted, disabled or demoted (409), so a service can't lock itself out.
 * Token binding (security §6): each record has a `uid` that is never reused (a re-created user gets a new one) and a
 * `tokenVersion` bumped on disable/enable, password and group changes; a token carries both (`uid`, `tv`) and is
 * accepted only while they match the current record.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Bucket, KvStore } from '../storage/kv-store.js';
import { AppError } from '../errors.js';
import { hashPassword, passwordPolicyProblem, verifyDummy, verifyPassword, type PasswordHasher } from './passwords.js';
import { LoginLimiter } from './throttle.js';

export const GROUPS = ['admin', 'user', 'readonly'] as const;
export type Group = (typeof GROUPS)[number];
export const GROUP_RANK: Record<Group, number> = { readonly: 0, user: 1, admin: 2 };

export interface UserRecord {
  username: string;
  passwordHash: string;
  fullname: string;
  email: string;
  group: Group;
  enabled: boolean;
  createdMs: number;
  updatedMs: number;
  /** Identity of this account, never reused: a token names it, so a deleted and re-created user's old tokens fail. */
  uid: string;
  /** Bumped on disable/enable, password and group changes: tokens carrying a lower version are refused. */
  tokenVersion: number;
  /**
   * Records stored before uid existed (set by the core migration users-token-binding): tokens without uid claims
   * issued before this moment (and not before tokensValidAfterMs) stay valid until they expire, until the first change
   * that bumps tokenVersion clears it.
   */
  legacyTokensBeforeMs?: number;
  /** Old records only: tokens issued before this moment are refused. */
  tokensValidAfterMs?: number;
}

/** What a token must carry to be accepted (see TokenService). */
export interface TokenBinding {
  username: string;
  uid?: string;
  tv?: number;
  issuedMs: number;
}

export interface PublicUser {
  username: string;
  fullname: string;
  email: string;
  group: Group;
  enabled: string;
  createdMs: number;
  updatedMs: number;
}

export interface UserInput {
  username?: string;
  password?: string;
  fullname?: string;
  email?: string;
  group?: string;
  enabled?: string;
}

const USERNAME_RE = /^[A-Za-z0-9_.@-]{1,64}$/;
const EMAIL_RE = /^[^\s@,]+@[^\s@,]+$/;

export function toPublic(u: UserRecord): PublicUser {
  return {
    username: u.username,
    fullname: u.fullname,
    email: u.email,
    group: u.group,
    enabled: String(u.enabled),
    createdMs: u.createdMs,
    updatedMs: u.updatedMs,
  };
}

function checkFields(input: UserInput): void {
  const weak = input.password === undefined ? undefined : passwordPolicyProblem(input.password);
  if (weak) throw AppError.badRequest(weak, 'body.password');
  if (input.group !== undefined && !(GROUPS as readonly string[]).includes(input.group)) {
    throw AppError.badRequest(`group must be one of ${GROUPS.join(', ')}`, 'body.group');
  }
  if (input.enabled !== undefined && input.enabled !== 'true' && input.enabled !== 'false') {
    throw AppError.badRequest('enabled must be true or false', 'body.enabled');
  }
  if (input.email !== undefined && input.email !== '' && !EMAIL_RE.test(input.email)) {
    throw AppError.badRequest('email is not an email address', 'body.email');
  }
}

export class UserService {
  private readonly users = new Map<string, UserRecord>();
  private readonly bucket: Bucket;
  readonly limiter: LoginLimiter;
  private readonly passwordListeners: Array<(username: string) => void> = [];
  private following = false;

  constructor(
    private readonly store: KvStore,
    private readonly log: Logger,
    limiter = new LoginLimiter(),
  ) {
    this.bucket = store.bucket('users');
    this.limiter = limiter;
  }

  /** Loads every user, and from then on follows the changes other instances make (a cluster: docs/cluster.md). */
  async load(): Promise<void> {
    if (!this.following) {
      this.following = true;
      this.store.watch('users', (k) => (k === undefined ? this.reloadAll() : this.reloadOne(String(k))));
    }
    await this.reloadAll();
  }

  private async reloadAll(): Promise<void> {
    const next: UserRecord[] = [];
    for await (const { value } of this.bucket.range<UserRecord>()) next.push(value);
    this.users.clear();
    for (const u of next) this.users.set(u.username, u);
  }

  private async reloadOne(username: string): Promise<void> {
    const u = await this.bucket.get<UserRecord>(username);
    if (u) this.users.set(username, u);
    else this.users.delete(username);
  }

  /**
   * Creates the admin user when there are no users; returns the password when it was generated. `hash` makes its
   * password hash (default: argon2 in this process).
   */
  async ensureAdmin(
    password?: string,
    hash: PasswordHasher = hashPassword,
  ): Promise<{ created: boolean; generatedPassword?: string }> {
    if (this.users.size > 0) return { created: false };
    const pw = password ?? randomBytes(12).toString('base64url');
    await this.create(
      { username: 'admin', password: pw, fullname: 'Administrator', email: '', group: 'admin', enabled: 'true' },
      hash,
    );
    this.log.info({ username: 'admin' }, 'created the initial admin user');
    return { created: true, generatedPassword: password ? undefined : pw };
  }

  /** Called after a user's password is changed or the user deleted (the initial password file's cleanup). */
  onPasswordChange(fn: (username: string) => void): void {
    this.passwordListeners.push(fn);
  }

  private passwordChanged(username: string): void {
    for (const fn of this.passwordListeners) {
      try {
        fn(username);
      } catch (e) {
        this.log.warn({ err: e, username }, 'password change hook failed');
      }
    }
  }

  list(): PublicUser[] {
    return [...this.users.values()].sort((a, b) => a.username.localeCompare(b.username)).map(toPublic);
  }

  get(username: string): UserRecord | undefined {
    return this.users.get(username);
  }

  /**
   * True when the user exists, is enabled and the token is bound to this very account at its current version; a token
   * without uid (issued before the upgrade) only while the record still accepts legacy tokens.
   */
  acceptsToken(t: TokenBinding): boolean {
    const u = this.users.get(t.username);
    if (!u || !u.enabled) return false;
    if (t.uid !== undefined) return t.uid === u.uid && (t.tv ?? -1) >= u.tokenVersion;
    return (
      u.legacyTokensBeforeMs !== undefined &&
      t.issuedMs < u.legacyTokensBeforeMs &&
      t.issuedMs >= (u.tokensValidAfterMs ?? 0)
    );
  }

  async create(input: UserInput, hash: PasswordHasher = hashPassword): Promise<PublicUser> {
    if (!input.username || !USERNAME_RE.test(input.username)) {
      throw AppError.badRequest('username must be 1-64 characters of letters, digits, _ . @ -', 'body.username');
    }
    if (!input.password) throw AppError.badRequest('password is required', 'body.password');
    checkFields(input);
    if (this.users.has(input.username)) throw AppError.conflict(`user ${input.username} already exists`);
    const now = Date.now();
    const rec: UserRecord = {
      username: input.username,
      passwordHash: await hash(input.password),
      fullname: input.fullname ?? '',
      email: input.email ?? '',
      group: (input.group as Group) ?? 'readonly',
      enabled: input.enabled !== 'false',
      createdMs: now,
      updatedMs: now,
      uid: randomUUID(),
      tokenVersion: 1,
    };
    if (this.users.has(rec.username)) throw AppError.conflict(`user ${rec.username} already exists`);
    this.users.set(rec.username, rec);
    await this.bucket.put(rec.username, rec);
    return toPublic(rec);
  }

  async update(input: UserInput): Promise<PublicUser> {
    if (!input.username) throw AppError.badRequest('username is required', 'body.username');
    const cur = this.users.get(input.username);
    if (!cur) throw AppError.notFound(`user ${input.username} not found`);
    checkFields(input);
    const next: UserRecord = { ...cur, updatedMs: Date.now() };
    if (input.fullname !== undefined) next.fullname = input.fullname;
    if (input.email !== undefined) next.email = input.email;
    if (input.group !== undefined) next.group = input.group as Group;
    if (input.enabled !== undefined) next.enabled = input.enabled === 'true';
    if (input.password !== undefined) next.passwordHash = await hashPassword(input.password);
    if (input.password !== undefined || next.group !== cur.group || next.enabled !== cur.enabled) {
      next.tokenVersion = cur.tokenVersion + 1;
      delete next.legacyTokensBeforeMs;
    }
    if ((next.group !== 'admin' || !next.enabled) && this.isLastAdmin(cur)) {
      throw AppError.conflict('the last enabled admin cannot be demoted or disabled');
    }
    this.users.set(next.username, next);
    await this.bucket.put(next.username, next);
    if (input.password !== undefined) this.passwordChanged(next.username);
    return toPublic(next);
  }

  async remove(username: string): Promise<void> {
    const cur = this.users.get(username);
    if (!cur) throw AppError.notFound(`user ${username} not found`);
    if (this.isLastAdmin(cur)) throw AppError.conflict('the last enabled admin cannot be deleted');
    this.users.delete(username);
    await this.bucket.delete(username);
    this.passwordChanged(username);
  }

  /**
   * Checks credentials, the attempt counted before the password is (security §14): per (name, client), per client and
   * per name across clients; never reveals whether the user exists.
   */
  async authenticate(username: string, password: string, clientKey: string): Promise<UserRecord> {
    const pair = `p:${username}\n${clientKey}`;
    const keys = [
      { key: pair, maxFailures: 10 },
      { key: `c:${clientKey}`, maxFailures: 30 },
      { key: `u:${username}`, maxFailures: 100 },
    ];
    const reservation = this.limiter.reserve(keys);
    // The same limits over every instance of the store (a cluster: docs/cluster.md), so N instances do not allow N
    // times the attempts; a blocked client is refused above without reaching the store.
    const shared = (k: string) => `login:${k}`;
    const waitMs = await this.store.attempts.hit(
      keys.map((k) => ({ key: shared(k.key), max: k.maxFailures, ...this.limiter.timing })),
    );
    if (waitMs > 0) {
      throw new AppError('TOO_MANY_REQUESTS', 'too many failed logins; try again later', {
        retryAfterS: Math.ceil(waitMs / 1000),
      });
    }
    const u = this.users.get(username);
    const ok = await this.limiter.withVerifySlot(() =>
      u ? verifyPassword(u.passwordHash, password) : verifyDummy(password),
    );
    if (!u || !ok || !u.enabled) {
      this.log.info({ username, client: clientKey }, 'failed login');
      throw AppError.unauthorized('invalid username or password');
    }
    this.limiter.succeed(reservation, pair);
    await this.store.attempts.release(
      keys.filter((k) => k.key !== pair).map((k) => shared(k.key)),
      shared(pair),
    );
    return u;
  }

  private isLastAdmin(u: UserRecord): boolean {
    if (u.group !== 'admin' || !u.enabled) return false;
    return [...this.users.values()].filter((x) => x.group === 'admin' && x.enabled).length <= 1;
  }
}
