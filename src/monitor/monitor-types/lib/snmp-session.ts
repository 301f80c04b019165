/**
 * One SNMP GET through net-snmp, session opened and closed per call, with v1/v2c/v3 credentials mapped from the
 * spec's names, and the value rendered with its type.
 *
 * Two privacy protocols need help on Node 20 + net-snmp 3.29 (installCiphers, idempotent, adds to net-snmp's
 * algorithm table once per process):
 *  - DES: OpenSSL 3 keeps des-cbc in the legacy provider, so createCipheriv('des-cbc') throws. Single DES equals
 *    3DES-EDE with K1=K2=K3, and des-ede3-cbc is in the default provider: DES is re-implemented on that.
 *  - AES192: net-snmp has no AES-192; it is added as aes-192-cfb with Blumenthal key extension, which is what
 *    Net-SNMP's "AES192" means (AES256 maps to net-snmp's aes256b, also Blumenthal).
 */
import crypto from 'node:crypto';
import snmp from 'net-snmp';
import type { SECURITY_LEVELS, SNMP_VERSIONS } from './snmp-protocols.js';

/** net-snmp privProtocol number used for AES-192 (Blumenthal); outside net-snmp's own numbers. */
export const AES192B = 192;

const AUTH: Record<string, number> = {
  MD5: snmp.AuthProtocols.md5,
  SHA: snmp.AuthProtocols.sha,
  SHA224: snmp.AuthProtocols.sha224,
  SHA256: snmp.AuthProtocols.sha256,
  SHA384: snmp.AuthProtocols.sha384,
  SHA512: snmp.AuthProtocols.sha512,
};
const PRIV: Record<string, number> = {
  DES: snmp.PrivProtocols.des,
  AES: snmp.PrivProtocols.aes,
  AES192: AES192B,
  AES256: snmp.PrivProtocols.aes256b,
};

type DesAlgo = { KEY_LENGTH: number; BLOCK_LENGTH: number };
interface Engine {
  engineID: Buffer;
}
interface SnmpInternals {
  Encryption: {
    algorithms: Record<number, any>;
    encryptPduAes: unknown;
    decryptPduAes: unknown;
    generateLocalizedKeyBlumenthal: unknown;
  };
  Authentication: { passwordToKey(auth: number, pw: string, engineID: Buffer): Buffer };
}

function desKeyIv(des: DesAlgo, lib: SnmpInternals, auth: number, pw: string, engine: Engine, salt: Buffer) {
  const localized = lib.Authentication.passwordToKey(auth, pw, engine.engineID);
  const key = localized.subarray(0, des.KEY_LENGTH);
  const preIv = localized.subarray(des.KEY_LENGTH, des.KEY_LENGTH + des.BLOCK_LENGTH);
  const iv = Buffer.alloc(des.BLOCK_LENGTH);
  for (let i = 0; i < iv.length; i++) iv[i] = preIv[i]! ^ salt[i]!;
  return { key: Buffer.concat([key, key, key]), iv };
}

function desCbcWorks(): boolean {
  try {
    crypto.createCipheriv('des-cbc', Buffer.alloc(8, 1), Buffer.alloc(8));
    return true;
  } catch {
    return false;
  }
}

let installed = false;
/** Idempotent; see the header. */
export function installCiphers(): void {
  if (installed) return;
  installed = true;
  const lib = snmp as unknown as SnmpInternals;
  const algos = lib.Encryption.algorithms;
  if (!algos[AES192B]) {
    algos[AES192B] = {
      CRYPTO_ALGORITHM: 'aes-192-cfb',
      KEY_LENGTH: 24,
      BLOCK_LENGTH: 16,
      encryptPdu: lib.Encryption.encryptPduAes,
      decryptPdu: lib.Encryption.decryptPduAes,
      localizationAlgorithm: lib.Encryption.generateLocalizedKeyBlumenthal,
    };
  }
  const des = algos[snmp.PrivProtocols.des] as DesAlgo & Record<string, unknown>;
  if (desCbcWorks()) return;
  des.encryptPdu = (pdu: Buffer, _p: number, pw: string, auth: number, engine: Engine) => {
    const salt = Buffer.alloc(8);
    salt.writeUInt32BE(1, 0);
    crypto.randomBytes(4).copy(salt, 4);
    const { key, iv } = desKeyIv(des, lib, auth, pw, engine, salt);
    const padded = Buffer.alloc(Math.ceil(pdu.length / 8) * 8);
    pdu.copy(padded);
    const c = crypto.createCipheriv('des-ede3-cbc', key, iv).setAutoPadding(false);
    return { encryptedPdu: Buffer.concat([c.update(padded), c.final()]), msgPrivacyParameters: salt };
  };
  des.decryptPdu = (enc: Buffer, _p: number, salt: Buffer, pw: string, auth: number, engine: Engine) => {
    const { key, iv } = desKeyIv(des, lib, auth, pw, engine, salt);
    const d = crypto.createDecipheriv('des-ede3-cbc', key, iv).setAutoPadding(false);
    return Buffer.concat([d.update(enc), d.final()]);
  };
}

export interface SnmpTarget {
  host: string;
  port: number;
  version: (typeof SNMP_VERSIONS)[number];
  community?: string;
  v3?: {
    username: string;
    level: (typeof SECURITY_LEVELS)[number];
    authProtocol?: string;
    authPassword?: string;
    privProtocol?: string;
    privPassword?: string;
  };
  timeoutMs: number;
}

export interface SnmpValue {
  oid: string;
  type: string;
  value: string;
  numeric?: number;
}

function openSession(t: SnmpTarget): snmp.Session {
  const transport = t.host.includes(':') ? 'udp6' : 'udp4';
  const common = { port: t.port, timeout: Math.max(50, t.timeoutMs), retries: 0, transport, idBitsSize: 32 } as const;
  if (t.version !== 'v3') {
    const version = t.version === 'v1' ? snmp.Version1 : snmp.Version2c;
    return snmp.createSession(t.host, t.community ?? '', { ...common, version });
  }
  installCiphers();
  const v3 = t.v3!;
  const user: snmp.User = { name: v3.username, level: snmp.SecurityLevel[v3.level] };
  if (v3.level !== 'noAuthNoPriv') {
    user.authProtocol = AUTH[v3.authProtocol ?? 'SHA'];
    user.authKey = v3.authPassword ?? '';
  }
  if (v3.level === 'authPriv') {
    user.privProtocol = PRIV[v3.privProtocol ?? 'AES'];
    user.privKey = v3.privPassword ?? '';
  }
  return snmp.createV3Session(t.host, user, { ...common, version: snmp.Version3 });
}

const NUMERIC = new Set([
  'Integer',
  'Counter',
  'Counter32',
  'Gauge',
  'Gauge32',
  'Unsigned32',
  'TimeTicks',
  'Counter64',
]);

/** Renders a varbind: OctetString as text when printable UTF-8, else hex; Counter64 as a decimal string. */
export function renderVarbind(vb: snmp.Varbind): SnmpValue {
  const type = String(snmp.ObjectType[vb.type as number] ?? vb.type);
  let value: string;
  const v = vb.value as unknown;
  if (Buffer.isBuffer(v)) {
    if (type === 'Counter64') value = v.length ? BigInt(`0x${v.toString('hex')}`).toString() : '0';
    else {
      const text = v.toString('utf8');
      value =
        /^[\p{L}\p{N}\p{P}\p{S}\p{Zs}\t\r\n]*$/u.test(text) && Buffer.from(text, 'utf8').equals(v)
          ? text
          : v.toString('hex').replace(/(..)(?=.)/g, '$1:');
    }
  } else {
    const scalar = v as string | number | bigint | null | undefined; // what net-snmp decodes besides buffers
    value = scalar === null || scalar === undefined ? '' : String(scalar);
  }
  const out: SnmpValue = { oid: vb.oid, type, value };
  if (NUMERIC.has(type) && value !== '' && Number.isFinite(Number(value))) out.numeric = Number(value);
  return out;
}

export type SnmpGetResult =
  | { ok: true; value: SnmpValue }
  | { ok: false; kind: 'timeout' | 'aborted' | 'varbind' | 'auth' | 'status' | 'other'; message: string };

/** GETs one OID; the session is closed on every path, including abort. */
export function snmpGet(t: SnmpTarget, oid: string, signal?: AbortSignal): Promise<SnmpGetResult> {
  return new Promise((resolve) => {
    let session: snmp.Session;
    try {
      session = openSession(t);
    } catch (e) {
      resolve({ ok: false, kind: 'other', message: `cannot open SNMP session: ${(e as Error).message}` });
      return;
    }
    let done = false;
    const finish = (r: SnmpGetResult): void => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      try {
        session.close();
      } catch {
        /* already closed */
      }
      resolve(r);
    };
    const onAbort = (): void => finish({ ok: false, kind: 'aborted', message: 'no SNMP response before the timeout' });
    session.on('error', (e: Error) => finish({ ok: false, kind: 'other', message: e.message }));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    session.get([oid], (err: Error | null, varbinds?: snmp.Varbind[]) => {
      if (err) return finish(classifyError(err));
      const vb = varbinds?.[0];
      if (!vb) return finish({ ok: false, kind: 'other', message: 'empty SNMP response' });
      if (snmp.isVarbindError(vb)) return finish({ ok: false, kind: 'varbind', message: snmp.varbindError(vb) });
      finish({ ok: true, value: renderVarbind(vb) });
    });
  });
}

export function classifyError(err: Error): SnmpGetResult & { ok: false } {
  if (err.name === 'RequestTimedOutError') {
    return {
      ok: false,
      kind: 'timeout',
      message: 'no SNMP response (agent down, or wrong community / v3 credentials it ignored)',
    };
  }
  if (err.name === 'RequestFailedError') {
    const status = (err as Error & { status?: number }).status;
    return {
      ok: false,
      kind: 'status',
      message: `agent answered ${snmp.ErrorStatus[status as number] ?? err.message}`,
    };
  }
  if (err.name === 'ResponseInvalidError') {
    const code = (err as Error & { code?: number }).code;
    const what =
      code === snmp.ResponseInvalidCode.ECouldNotDecrypt
        ? 'decryption failed (wrong privacy password or protocol)'
        : err.message;
    return { ok: false, kind: 'auth', message: `SNMPv3 authentication failed: ${what}` };
  }
  return { ok: false, kind: 'other', message: err.message };
}
