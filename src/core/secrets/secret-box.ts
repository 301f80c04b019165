/**
 * Encryption at rest for secrets (SMTP, database, SNMP, basic-auth passwords, webhook URLs, TOTP seeds).
 * AES-256-GCM with a random 96-bit IV per value; the 32-byte key lives in `<DATA_DIR>/<service>-secret.key` (0600),
 * created on first start. Ciphertexts look like `enc:v1:<base64(iv | tag | ciphertext)>`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

export interface SecretBox {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
  isSealed(value: unknown): boolean;
}

export function loadOrCreateKey(file: string): Buffer {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`secret key file ${file} is not a 32-byte base64 key`);
  return key;
}

export function createSecretBox(key: Buffer): SecretBox {
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    decrypt(sealed) {
      if (!sealed.startsWith(PREFIX)) throw new Error('value is not sealed');
      const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
    isSealed(value) {
      return typeof value === 'string' && value.startsWith(PREFIX);
    },
  };
}

export function openSecretBox(dataDir: string, service: string): SecretBox {
  return createSecretBox(loadOrCreateKey(path.join(dataDir, `${service}-secret.key`)));
}
