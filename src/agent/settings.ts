/**
 * The agent's settings (POST /updateSetting, GET /api/setting) and SMTP configuration (POST /setsmtp), on the shared
 * settings service (core/settings): records `settings` and `smtp` of the SETTINGS bucket. Every value is a string,
 * as the spec writes them. Unknown keys → 400 naming the key.
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
 * RSS as % of memory), PORT (per watched port: established connections). When set, Min ≤ Maj ≤ Cri must hold (a
 * rule over the group's three keys).
 *
 * SMTP keys: smtpEnabled (true/false), smtpServerName (required when smtpEnabled is true: a rule), smtpPort
 * (1–65535), smtpUsername, smtpPwd (write-only, kept verbatim, sealed with the secret box, never returned: the API
 * shows smtpPwdSet), smtpTLS (true = STARTTLS required; port 465 = implicit TLS), and two keys the spec leaves open:
 * smtpFrom (sender; default smtpUsername) and smtpTo (comma-separated alert recipients).
 *
 * Updates are validated whole before anything is written; stored values that fail at load are logged and their
 * defaults used, never fatal (docs/security.md §15). Both come from the shared service.
 */
import { AppError } from '../core/errors.js';
import { LOG_LEVELS } from '../core/config/env.js';
import type { KvStore } from '../core/storage/kv-store.js';
import type { SecretBox } from '../core/secrets/secret-box.js';
import { MAX } from '../core/http/schemas.js';
import {
  SettingsService,
  withSchema,
  type SettingDef,
  type SettingsLog,
  type SettingsRule,
  type ValueSchema,
} from '../core/settings/settings.service.js';

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
const GROUP_UNITS: Record<MetricGroup, string> = {
  CPU: 'total CPU %',
  MEM: 'memory used %',
  SWAP: 'swap used %',
  DISK: 'used % per mount',
  LOAD: 'load average 1/5/15, raw',
  PROC: 'per watched process: summed CPU %, 100 = one core, and summed RSS as % of memory',
  PORT: 'per watched port: established connections',
};
const LEVELS = ['Min', 'Maj', 'Cri'] as const;
const LEVEL_NAMES = { Min: 'minor', Maj: 'major', Cri: 'critical' } as const;

export type Settings = Record<string, string>;

const NAME_RE = /^[A-Za-z0-9._:+@-]{1,64}$/;

export function parseSchedMinutes(value: string): number | undefined {
  const m = /^(\d{1,4})MIN$/.exec(value);
  const n = m ? Number(m[1]) : NaN;
  return Number.isInteger(n) && n >= SCHED_MIN_MINUTES && n <= SCHED_MAX_MINUTES ? n : undefined;
}

export function csv(value: string): string[] {
  return value
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

export function parsePort(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/**
 * A validator accepting what `ok` accepts, else 400 `<key>: <why>` naming the key, with the schema the OpenAPI shows
 * (http/settings-schemas.ts). A new function each call: withSchema attaches the schema to it.
 */
function accept(ok: (value: string) => boolean, why: string, schema: ValueSchema = {}): SettingDef['validate'] {
  return withSchema((value, key) => {
    if (!ok(value)) throw AppError.badRequest(`${key}: ${why}`, `body.${key}`);
    return value;
  }, schema);
}
const TRUE_FALSE = ['true', 'false'] as const;
const trueFalse = () => accept((x) => x === 'true' || x === 'false', 'true or false', { enum: TRUE_FALSE });
const text = (maxLength: number) => accept(() => true, '', { maxLength });
const def = (dflt: string, description: string, validate: SettingDef['validate']): SettingDef => ({
  default: dflt,
  description,
  validate,
});

/** The settings record's definitions, in the order the API lists them: one entry per key (docs/agent.md). */
function settingDefs(): [string, SettingDef][] {
  const defs: [string, SettingDef][] = [
    [
      'logLevel',
      def(
        'info',
        'log level',
        accept((x) => (LOG_LEVELS as readonly string[]).includes(x), `one of ${LOG_LEVELS.join(', ')}`, {
          enum: LOG_LEVELS,
        }),
      ),
    ],
    [
      'sched',
      def(
        '5MIN',
        `one cycle every N minutes: <N>MIN, N ${SCHED_MIN_MINUTES}–${SCHED_MAX_MINUTES}`,
        accept(
          (x) => parseSchedMinutes(x) !== undefined,
          `<N>MIN with N an integer ${SCHED_MIN_MINUTES}–${SCHED_MAX_MINUTES}`,
          { pattern: '^[0-9]{1,4}MIN$', example: '5MIN' },
        ),
      ),
    ],
    [
      'processes',
      def(
        '',
        'comma-separated process names to watch (1–64 of A-Za-z0-9._:+@-)',
        accept((x) => csv(x).every((n) => NAME_RE.test(n)), 'comma-separated names of [A-Za-z0-9._:+@-]{1,64}', {
          maxLength: MAX.list,
        }),
      ),
    ],
    [
      'ports',
      def(
        '',
        'comma-separated TCP ports to watch, 1–65535',
        accept((x) => csv(x).every((p) => parsePort(p) !== undefined), 'comma-separated ports 1–65535', {
          maxLength: MAX.list,
        }),
      ),
    ],
  ];
  for (const g of METRIC_GROUPS) {
    LEVELS.forEach((l, i) =>
      defs.push([
        `disco${g}GFixedThresh${l}`,
        def(
          FIXED_DEFAULTS[g][i]!,
          `fixed ${LEVEL_NAMES[l]} threshold of the ${g} group (${GROUP_UNITS[g]}): a number ≥ 0, or '' = unset ` +
            '(the automatic baseline is used); Min ≤ Maj ≤ Cri',
          accept((x) => x === '' || (/^\d+(\.\d+)?$/.test(x) && Number.isFinite(Number(x))), 'a number ≥ 0 or empty', {
            pattern: '^([0-9]{1,12}(\\.[0-9]{1,6})?)?$',
            example: '90',
          }),
        ),
      ]),
    );
    defs.push([`disco${g}GMonEnabled`, def('true', `monitor the ${g} group`, trueFalse())]);
  }
  return defs;
}

export function defaultSettings(): Settings {
  return Object.fromEntries(settingDefs().map(([k, d]) => [k, d.default]));
}

/** Min ≤ Maj ≤ Cri among a group's thresholds that are set; names the given key of the first pair out of order. */
export function thresholdOrderRule(g: MetricGroup): SettingsRule {
  const keys = LEVELS.map((l) => `disco${g}GFixedThresh${l}`);
  return {
    keys,
    check(values, given) {
      const set = keys.filter((k) => values[k] !== '');
      for (let i = 1; i < set.length; i++) {
        const [lo, hi] = [set[i - 1]!, set[i]!];
        if (Number(values[hi]) < Number(values[lo]))
          return {
            key: [lo, hi].find((k) => given.has(k)) ?? lo,
            message: `${hi} (${values[hi]}) is below ${lo} (${values[lo]}): Min ≤ Maj ≤ Cri must hold`,
          };
      }
      return undefined;
    },
  };
}

export function createAgentSettings(store: KvStore, box: SecretBox): SettingsService {
  const s = new SettingsService(store, box, 'settings', 'SETTINGS');
  for (const [key, d] of settingDefs()) s.define(key, d);
  for (const g of METRIC_GROUPS) s.rule(thresholdOrderRule(g));
  return s;
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

/** smtpServerName is required when smtpEnabled is true (named whichever of the two was sent). */
export const SMTP_SERVER_RULE: SettingsRule = {
  keys: ['smtpEnabled', 'smtpServerName'],
  check: (values) =>
    values.smtpEnabled === 'true' && !values.smtpServerName
      ? { key: 'smtpServerName', message: 'smtpServerName is required when smtpEnabled is true' }
      : undefined,
};

export function createAgentSmtp(store: KvStore, box: SecretBox): SettingsService {
  const email = /^[^\s@,]+@[^\s@,]+$/;
  return new SettingsService(store, box, 'smtp', 'SETTINGS')
    .define('smtpEnabled', def('false', 'send alert mail', trueFalse()))
    .define(
      'smtpServerName',
      def(
        '',
        'host name or address',
        accept((x) => /^[A-Za-z0-9.:_-]{0,253}$/.test(x), 'a host name or address', { maxLength: 253 }),
      ),
    )
    .define(
      'smtpPort',
      def(
        '587',
        'SMTP port, 1–65535',
        accept((x) => parsePort(x) !== undefined, '1–65535', { pattern: '^[0-9]{1,5}$', example: '587' }),
      ),
    )
    .define('smtpUsername', def('', 'SMTP account', text(320)))
    .define('smtpTLS', def('true', 'true: STARTTLS required (port 465: implicit TLS)', trueFalse()))
    .define('smtpFrom', def('', 'sender (default smtpUsername)', text(320)))
    .define(
      'smtpTo',
      def(
        '',
        'comma-separated alert recipients',
        accept((x) => csv(x).every((a) => email.test(a)), 'comma-separated email addresses', { maxLength: MAX.list }),
      ),
    )
    .define('smtpPwd', {
      ...def('', 'write-only: sealed at rest, never returned', text(1024)),
      secret: true,
      verbatim: true,
    })
    .rule(SMTP_SERVER_RULE);
}

/** A record as the API shows it: a secret key k only as `<k>Set`, 'true' or 'false' (http/settings-schemas.ts). */
function apiView(service: SettingsService): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.publicView())) {
    if (service.definitions().get(k)?.secret) out[`${k}Set`] = v === 'set' ? 'true' : 'false';
    else out[k] = v;
  }
  return out;
}

/** The agent's two records in the API's shape: settings as they are, SMTP with smtpPwdSet instead of the password. */
export class AgentSettings {
  readonly settings: SettingsService;
  readonly smtp: SettingsService;

  constructor(store: KvStore, box: SecretBox) {
    this.settings = createAgentSettings(store, box);
    this.smtp = createAgentSmtp(store, box);
  }

  async load(log?: SettingsLog): Promise<void> {
    await this.settings.load(log);
    await this.smtp.load(log);
  }

  get(): Settings {
    return apiView(this.settings);
  }

  /** Told the whole settings after every change (an update here, or one another instance stored). */
  onChange(fn: (s: Settings) => void): void {
    this.settings.onChange(() => fn(this.get()));
  }

  /** An empty patch changes nothing and answers the current settings (as the agent always has). */
  async update(patch: Record<string, unknown>): Promise<Settings> {
    return Object.keys(patch).length === 0 ? this.get() : this.settings.update(patch);
  }

  /** SMTP as returned by the API: never the password, only whether one is set. */
  smtpPublic(): SmtpConfig & { smtpPwdSet: string } {
    return apiView(this.smtp) as unknown as SmtpConfig & { smtpPwdSet: string };
  }

  /** SMTP with the password decrypted, for sending only. */
  smtpWithSecret(): SmtpConfig & { smtpPwd: string } {
    const { smtpPwdSet: _, ...pub } = this.smtpPublic();
    return { ...pub, smtpPwd: this.smtp.get('smtpPwd') ?? '' };
  }

  async setSmtp(patch: Record<string, unknown>): Promise<SmtpConfig & { smtpPwdSet: string }> {
    if (Object.keys(patch).length > 0) await this.smtp.update(patch);
    return this.smtpPublic();
  }
}
