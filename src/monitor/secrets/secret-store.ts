/**
 * Named secrets of the monitor service (bucket `secrets`): credentials and TOTP seeds that exec monitors reference as
 * {{secret:name}} / {{totp:name}}, and `vaultToken` for {{vault:path#key}}. Values are sealed by the secret box,
 * write-only over the API (listing shows names and times only), decrypted only when a check reads them.
 */
import type { Bucket, KvStore } from '../../core/storage/kv-store.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import { AppError } from '../../core/errors.js';

export const SECRET_NAME_RE = /^[A-Za-z0-9_.-]{1,64}$/;

interface SecretRecord {
  name: string;
  sealed: string;
  updatedMs: number;
}

export class SecretStore {
  private readonly bucket: Bucket;

  constructor(
    store: KvStore,
    private readonly box: SecretBox,
  ) {
    this.bucket = store.bucket('secrets');
  }

  async get(name: string): Promise<string | undefined> {
    const rec = await this.bucket.get<SecretRecord>(name);
    return rec ? this.box.decrypt(rec.sealed) : undefined;
  }

  async set(name: string, value: string): Promise<{ name: string; updatedMs: number }> {
    if (!SECRET_NAME_RE.test(name))
      throw AppError.badRequest('secret names are 1-64 of A-Z a-z 0-9 _ . -', 'params.name');
    if (value.length === 0 || value.length > 16_384)
      throw AppError.badRequest('value must be 1-16384 characters', 'body.value');
    const rec: SecretRecord = { name, sealed: this.box.encrypt(value), updatedMs: Date.now() };
    await this.bucket.put(name, rec);
    return { name, updatedMs: rec.updatedMs };
  }

  async list(): Promise<Array<{ name: string; updatedMs: number }>> {
    const out: Array<{ name: string; updatedMs: number }> = [];
    for await (const { value } of this.bucket.range<SecretRecord>())
      out.push({ name: value.name, updatedMs: value.updatedMs });
    return out;
  }

  async remove(name: string): Promise<void> {
    if (!(await this.bucket.delete(name))) throw AppError.notFound(`secret ${name} not found`);
  }
}
