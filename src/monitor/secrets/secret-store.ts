/**
 * Named secrets of the monitor service (bucket `secrets`): credentials and TOTP seeds that exec monitors reference as
 * {{secret:name}} / {{totp:name}}, and `vaultToken` for {{vault:path#key}}. Values are sealed by the secret box,
 * write-only over the API (listing shows names, times and scopes only), decrypted only when a check reads them.
 * Each secret, and each Vault path prefix (bucket `vault-scopes`), carries the scope an admin set (secret-scope.ts);
 * `authorize` decides whether a monitor may use a reference where it types it.
 */
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import { AppError } from '../../core/errors.js';
import { scopeRefusal, type SecretScope, type SecretUse } from './secret-scope.js';

export const SECRET_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;
/** A Vault path prefix: mount/path segments, no `.`/`..`, no `#`. */
const VAULT_PREFIX_RE = /^[\w.-]+(\/[\w.-]+)*\/?$/;

interface SecretRecord {
  name: string;
  sealed: string;
  updatedMs: number;
  /** Absent in records stored before scopes existed: usable only by admins' monitors (secret-scope.ts). */
  scope?: SecretScope;
}

export interface SecretItem {
  name: string;
  updatedMs: number;
  scope?: SecretScope;
}

export interface VaultScope extends SecretScope {
  prefix: string;
}

export class SecretStore {
  private readonly bucket: Bucket;
  private readonly vault: Bucket;

  constructor(
    store: KvStore,
    private readonly box: SecretBox,
  ) {
    this.bucket = store.bucket('secrets');
    this.vault = store.bucket('vault-scopes');
  }

  async get(name: string): Promise<string | undefined> {
    const rec = await this.bucket.get<SecretRecord>(name);
    return rec ? this.box.decrypt(rec.sealed) : undefined;
  }

  /** Stores a value; `scope` replaces the stored scope when given, else the stored one is kept. */
  async set(name: string, value: string, scope?: SecretScope): Promise<SecretItem> {
    if (!SECRET_NAME_RE.test(name))
      throw AppError.badRequest('secret names are 1-64 of A-Z a-z 0-9 _ . -', 'params.name');
    if (value.length === 0 || value.length > 16_384)
      throw AppError.badRequest('value must be 1-16384 characters', 'body.value');
    const old = await this.bucket.get<SecretRecord>(name);
    const kept = scope ?? old?.scope;
    const rec: SecretRecord = {
      name,
      sealed: this.box.encrypt(value),
      updatedMs: Date.now(),
      ...(kept ? { scope: kept } : {}),
    };
    await this.bucket.put(name, rec);
    return item(rec);
  }

  async setScope(name: string, scope: SecretScope): Promise<SecretItem> {
    const old = await this.bucket.get<SecretRecord>(name);
    if (!old) throw AppError.notFound(`secret ${name} not found`);
    const rec: SecretRecord = { ...old, scope, updatedMs: Date.now() };
    await this.bucket.put(name, rec);
    return item(rec);
  }

  async list(): Promise<SecretItem[]> {
    const out: SecretItem[] = [];
    for await (const { value } of this.bucket.range<SecretRecord>()) out.push(item(value));
    return out;
  }

  async remove(name: string): Promise<void> {
    if (!(await this.bucket.delete(name))) throw AppError.notFound(`secret ${name} not found`);
  }

  async setVaultScope(prefix: string, scope: SecretScope): Promise<VaultScope> {
    if (!VAULT_PREFIX_RE.test(prefix) || prefix.split('/').some((s) => s === '.' || s === '..'))
      throw AppError.badRequest('prefix must be mount/path segments, e.g. secret/app/', 'body.prefix');
    const rec: VaultScope = { prefix: prefix.replace(/\/$/, ''), ...scope };
    await this.vault.put(rec.prefix, rec);
    return rec;
  }

  async vaultScopes(): Promise<VaultScope[]> {
    const out: VaultScope[] = [];
    for await (const { value } of this.vault.range<VaultScope>()) out.push(value);
    return out;
  }

  async removeVaultScope(prefix: string): Promise<void> {
    if (!(await this.vault.delete(prefix.replace(/\/$/, ''))))
      throw AppError.notFound(`no Vault scope for prefix ${prefix}`);
  }

  /** The scope of the longest prefix (whole segments) of a Vault path. */
  private async vaultScopeFor(path: string): Promise<SecretScope | undefined> {
    let best: VaultScope | undefined;
    for (const s of await this.vaultScopes())
      if ((path === s.prefix || path.startsWith(`${s.prefix}/`)) && s.prefix.length > (best?.prefix.length ?? -1))
        best = s;
    return best;
  }

  /** Why `monitor` may not use `use` (undefined: it may); `trusted`: the monitor's author is an admin. */
  async authorize(
    use: SecretUse,
    monitor: { name: string; tags: readonly string[] },
    trusted: boolean,
  ): Promise<string | undefined> {
    const scope =
      use.kind === 'vault'
        ? await this.vaultScopeFor(use.ref.slice(0, Math.max(0, use.ref.lastIndexOf('#'))))
        : (await this.bucket.get<SecretRecord>(use.ref))?.scope;
    return scopeRefusal(scope, use, monitor, trusted);
  }
}

function item(rec: SecretRecord): SecretItem {
  return { name: rec.name, updatedMs: rec.updatedMs, ...(rec.scope ? { scope: rec.scope } : {}) };
}
