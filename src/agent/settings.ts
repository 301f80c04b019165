/**
 * The agent's settings (POST /updateSetting, GET /api/setting) and SMTP configuration (POST /setsmtp), stored in the
 * SETTINGS bucket. Every value is a string, as the spec writes them. Unknown keys → 400 naming the key.
 *
 * | key | default | accepted |
 * |---|---|---|
 * | logLevel | info | trace, debug, info, warn, error |
 * | sched | 5MIN | `<N>MIN`, N an integer 1–1440 (one cycle every N minutes) |
 * | disco<G>GFixedThreshMin/Maj/Cri | see FIXED_DEFAULTS | a number ≥ 0, or '' = unset (the automatic baseline of POST /computeThreshold is then used) |
 * | disco<G>GMonEnabled | true | true, false |
 * | processes | '' | comma-separated process names (1–64 chars of [A-Za-z0-9._:+@-]) |
 * | ports | '' | comma-separated TCP ports 1–65535 |
 *
 * Metric groups G and their units: CPU (total CPU %), MEM (memory used %), SWAP (swap used %), DISK (used % per
 * mount), LOAD (load average 1/5/15, raw), PROC (per watched process: summed CPU % where 100 = one core, and summed
 * RSS as % of memory), PORT (per watched port: established connections). When set, Min ≤ Maj ≤ Cri must hold.
 *
 * SMTP keys: smtpEnabled (true/false), smtpServerName, smtpPort (1–65535), smtpUsername, smtpPwd (write-only: sealed
 * with the secret box, never returned), smtpTLS (true = STARTTLS required; port 465 = implicit TLS), and two keys
 * the spec leaves open: smtpFrom (sender; default smtpUsername) and smtpTo (comma-separated alert recipients).
 *
 * Updates are validated whole before anything is written. At load the stored records pass the same validation: a
 * value that fails (written by an older version or by hand) is logged and its default used, never fatal
 * (docs/security.md §15).
 */
import { AppError } from '../core/errors.js';
import { LOG_LEVELS } from '../core/config/env.js';
import type { KvStore } from '../core/storage/kv-store.js';
import type { SecretBox } from '../core/secrets/secret-box.js';
import type { SettingsLog } from '../core/settings/settings.service.js';

export const METRIC_GROUPS = ['CPU', 'MEM', 'SWAP', 'DISK', 'LOAD', 'PROC', 'PORT'] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

export const SCHED_MIN_MINUTES = 1;
export const SCHED_MAX_MINUTES = 1440;

const FIXED_DEFAULTS: Record<MetricGroup, [string, string, string]> = {
  CPU: ['80', '90', '95'],
  MEM: ['80', '90', '95'],
  SWAP: ['50', '75', '90'],
  DISK: ['80', '90', '95'],
  LOAD: ['', '', ''],
  PROC: ['', '', ''],
  PORT: ['', '', ''],
};

export type Settings = Record<string, string>;

export function defaultSettings(): Settings {
  const s: Settings = { logLevel: 'info', sched: '5MIN', processes: '', ports: '' };
  for (const g of METRIC_GROUPS) {
    const [mi, ma, cr] = FIXED_DEFAULTS[g];
    s[`disco${g}GFixedThreshMin`] = mi;
    s[`disco${g}GFixedThreshMaj`] = ma;
    s[`disco${g}GFixedThreshCri`] = cr;
    s[`disco${g}GMonEnabled`] = 'true';
  }
  return s;
}

const SETTING_KEYS = new Set(Object.keys(defaultSettings()));
const NAME_RE = /^[A-Za-z0-9._:+@-]{1,64}$/;

export function parseSchedMinutes(v: string): number | undefined {
  const m = /^(\d{1,4})MIN$/.exec(v);
  const n = m ? Number(m[1]) : NaN;
  return Number.isInteger(n) && n >= SCHED_MIN_MINUTES && n <= SCHED_MAX_MINUTES ? n : undefined;
}

export function csv(v: string): string[] {
  return v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

export function parsePort(v: string): number | undefined {
  if (!/^\d{1,5}$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 1 && n <= 65535 ? n : undefined;
}

function validateValue(key: string, v: string): void {
  const bad = (why: string): never => {
    throw AppError.badRequest(`${key}: ${why}`, `body.${key}`);
  };
  if (key === 'logLevel' && !(LOG_LEVELS as readonly string[]).includes(v)) bad(`one of ${LOG_LEVELS.join(', ')}`);
  if (key === 'sched' && parseSchedMinutes(v) === undefined)
    bad(`<N>MIN with N an integer ${SCHED_MIN_MINUTES}–${SCHED_MAX_MINUTES}`);
  if (/FixedThresh(Min|Maj|Cri)$/.test(key) && v !== '' && !(/^\d+(\.\d+)?$/.test(v) && Number.isFinite(Number(v))))
    bad('a number ≥ 0 or empty');
  if (key.endsWith('MonEnabled') && v !== 'true' && v !== 'false') bad('true or false');
  if (key === 'processes' && !csv(v).every((n) => NAME_RE.test(n)))
    bad('comma-separated names of [A-Za-z0-9._:+@-]{1,64}');
  if (key === 'ports' && !csv(v).every((p) => parsePort(p) !== undefined)) bad('comma-separated ports 1–65535');
}

/** Validates a partial update against the current settings; returns the merged result. */
export function mergeSettings(current: Settings, patch: Record<string, unknown>): Settings {
  const next = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (!SETTING_KEYS.has(k)) throw AppError.badRequest(`unknown setting: ${k}`, `body.${k}`);
    if (typeof v !== 'string') throw AppError.badRequest(`${k}: must be a string`, `body.${k}`);
    validateValue(k, v.trim());
    next[k] = v.trim();
  }
  for (const g of METRIC_GROUPS) {
    const vals = ['Min', 'Maj', 'Cri']
      .map((l) => next[`disco${g}GFixedThresh${l}`])
      .filter((x) => x !== '')
      .map(Number);
    for (let i = 1; i < vals.length; i++) {
      if (vals[i]! < vals[i - 1]!)
        throw AppError.badRequest(`disco${g}GFixedThresh: Min ≤ Maj ≤ Cri must hold`, `body.disco${g}GFixedThreshMin`);
    }
  }
  return next;
}

export interface SmtpConfig {
  smtpEnabled: string;
  smtpServerName: string;
  smtpPort: string;
  smtpUsername: string;
  smtpTLS: string;
  smtpFrom: string;
  smtpTo: string;
}
export type StoredSmtp = SmtpConfig & { smtpPwdSealed: string };
const SMTP_DEFAULTS: StoredSmtp = {
  smtpEnabled: 'false',
  smtpServerName: '',
  smtpPort: '587',
  smtpUsername: '',
  smtpTLS: 'true',
  smtpFrom: '',
  smtpTo: '',
  smtpPwdSealed: '',
};
const SMTP_KEYS = new Set([
  'smtpEnabled',
  'smtpServerName',
  'smtpPort',
  'smtpUsername',
  'smtpPwd',
  'smtpTLS',
  'smtpFrom',
  'smtpTo',
]);

export function mergeSmtp(current: StoredSmtp, patch: Record<string, unknown>, box: SecretBox): StoredSmtp {
  const next = { ...current };
  for (const [k, raw] of Object.entries(patch)) {
    if (!SMTP_KEYS.has(k)) throw AppError.badRequest(`unknown SMTP setting: ${k}`, `body.${k}`);
    if (typeof raw !== 'string') throw AppError.badRequest(`${k}: must be a string`, `body.${k}`);
    const v = k === 'smtpPwd' ? raw : raw.trim();
    if ((k === 'smtpEnabled' || k === 'smtpTLS') && v !== 'true' && v !== 'false')
      throw AppError.badRequest(`${k}: true or false`, `body.${k}`);
    if (k === 'smtpPort' && parsePort(v) === undefined) throw AppError.badRequest('smtpPort: 1–65535', 'body.smtpPort');
    if (k === 'smtpServerName' && !/^[A-Za-z0-9.:_-]{0,253}$/.test(v))
      throw AppError.badRequest('smtpServerName: a host name or address', 'body.smtpServerName');
    if (k === 'smtpTo' && !csv(v).every((a) => /^[^\s@,]+@[^\s@,]+$/.test(a)))
      throw AppError.badRequest('smtpTo: comma-separated email addresses', 'body.smtpTo');
    if (k === 'smtpPwd') next.smtpPwdSealed = v === '' ? '' : box.encrypt(v);
    else (next as Record<string, string>)[k] = v;
  }
  if (next.smtpEnabled === 'true' && !next.smtpServerName)
    throw AppError.badRequest('smtpServerName is required when smtpEnabled is true', 'body.smtpServerName');
  return next;
}

/**
 * A stored record merged onto the defaults through the update path's own validation: while it fails, the key it names
 * is dropped (for an ordering rule on a key not in the record, the keys of that rule's group), logged, and the merge
 * retried; when nothing can be dropped the defaults stand.
 */
function loadValidated<T extends object>(
  defaults: T,
  stored: Record<string, unknown>,
  merge: (base: T, patch: Record<string, unknown>) => T,
  record: string,
  log?: SettingsLog,
): T {
  const candidate = { ...stored };
  for (;;) {
    try {
      return merge(defaults, candidate);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      const key = (e.field ?? '').replace(/^body\./, '');
      const group = key.replace(/(Min|Maj|Cri)$/, '');
      const drop = key in candidate ? [key] : Object.keys(candidate).filter((k) => group !== '' && k.startsWith(group));
      for (const k of drop.length ? drop : [key || '(record)'])
        log?.error({ setting: k, record, why: e.message }, 'stored setting ignored, default used');
      if (drop.length === 0) return { ...defaults };
      for (const k of drop) delete candidate[k];
    }
  }
}

/** Settings and SMTP in the SETTINGS bucket; reads are served from memory. */
export class AgentSettings {
  private settings: Settings = defaultSettings();
  private smtp: StoredSmtp = { ...SMTP_DEFAULTS };
  private readonly listeners: Array<(s: Settings) => void> = [];

  constructor(
    private readonly store: KvStore,
    private readonly box: SecretBox,
  ) {}

  async load(log?: SettingsLog): Promise<void> {
    const b = this.store.bucket('SETTINGS');
    const saved = (await b.get<Record<string, unknown>>('settings')) ?? {};
    const known = Object.fromEntries(Object.entries(saved).filter(([k]) => SETTING_KEYS.has(k)));
    this.settings = loadValidated(defaultSettings(), known, mergeSettings, 'settings', log);
    const { smtpPwdSealed, ...smtp } = (await b.get<Record<string, unknown>>('smtp')) ?? {};
    const sealed = typeof smtpPwdSealed === 'string' && this.box.isSealed(smtpPwdSealed) ? smtpPwdSealed : '';
    if (sealed !== (smtpPwdSealed ?? ''))
      log?.error({ setting: 'smtpPwd', record: 'smtp', why: 'not sealed' }, 'stored setting ignored, default used');
    const mergeSmtpPublic = (base: StoredSmtp, patch: Record<string, unknown>): StoredSmtp => {
      const known = Object.fromEntries(Object.entries(patch).filter(([k]) => SMTP_KEYS.has(k) && k !== 'smtpPwd'));
      return mergeSmtp(base, known, this.box);
    };
    this.smtp = { ...loadValidated(SMTP_DEFAULTS, smtp, mergeSmtpPublic, 'smtp', log), smtpPwdSealed: sealed };
  }

  get(): Settings {
    return { ...this.settings };
  }

  onChange(fn: (s: Settings) => void): void {
    this.listeners.push(fn);
  }

  async update(patch: Record<string, unknown>): Promise<Settings> {
    const next = mergeSettings(this.settings, patch);
    await this.store.bucket('SETTINGS').put('settings', next);
    this.settings = next;
    for (const fn of this.listeners) fn(this.get());
    return this.get();
  }

  /** SMTP as returned by the API: never the password, only whether one is set. */
  smtpPublic(): SmtpConfig & { smtpPwdSet: string } {
    const { smtpPwdSealed, ...pub } = this.smtp;
    return { ...pub, smtpPwdSet: smtpPwdSealed ? 'true' : 'false' };
  }

  /** SMTP with the password decrypted, for sending only. */
  smtpWithSecret(): SmtpConfig & { smtpPwd: string } {
    const { smtpPwdSealed, ...pub } = this.smtp;
    return { ...pub, smtpPwd: smtpPwdSealed ? this.box.decrypt(smtpPwdSealed) : '' };
  }

  async setSmtp(patch: Record<string, unknown>): Promise<SmtpConfig & { smtpPwdSet: string }> {
    const next = mergeSmtp(this.smtp, patch, this.box);
    await this.store.bucket('SETTINGS').put('smtp', next);
    this.smtp = next;
    return this.smtpPublic();
  }
}
