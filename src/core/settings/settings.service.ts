/**
 * String-valued service settings (as the specs write them) in the store's `settings` bucket. Each key is defined once
 * with its default, a validator and a description (the OpenAPI and README tables come from these definitions).
 * An update is validated whole before anything is written: an unknown key or a bad value → 400 naming the key, and
 * nothing changes. Listeners hear about every applied change, so changes take effect live. At load, every stored value
 * passes its validator again: one that fails (written by an older version or by hand) is logged and its default used,
 * so a bad stored value never stops the service (docs/security.md §15).
 * Secret settings (passwords, tokens, webhook URLs) are kept sealed by the secret box and never returned.
 * Rules over several keys (min ≤ max, "required when enabled") are checked on the whole proposed record after each
 * key's own validator, with the same 400 naming a key; at load, a stored record that breaks a rule has the key the
 * rule names (else all of the rule's stored keys) reset to their defaults, logged like a bad value.
 */
import type { Bucket, KvStore } from '../storage/kv-store.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { AppError } from '../errors.js';

export interface SettingDef {
  default: string;
  description: string;
  /** Returns the normalised value or throws AppError.badRequest. */
  validate(value: string, key: string): string;
  secret?: boolean;
  /** The value is kept exactly as sent (never trimmed): passwords. */
  verbatim?: boolean;
}

/** Why a rule over several settings is broken: the key the 400 names (`body.<key>`), and the message. */
export interface RuleBreach {
  key: string;
  message: string;
}

/** A rule relating several settings (e.g. Min ≤ Maj ≤ Cri), checked on every proposed record as a whole. */
export interface SettingsRule {
  /** The keys it relates (all defined before the rule); the defaults must satisfy it. */
  keys: readonly string[];
  /**
   * Undefined when `values` (every setting; secrets as stored: sealed or '') satisfy the rule, else the breach.
   * `given` are the keys the caller sent (at load: the stored ones): name one of them where the rule leaves a choice.
   */
  check(values: Readonly<Record<string, string>>, given: ReadonlySet<string>): RuleBreach | undefined;
}

/** Where load() reports a stored value it ignored (a pino logger fits). */
export interface SettingsLog {
  error(obj: object, msg: string): void;
}

/** What the OpenAPI shows of a validator: its closed set, its length bound, its form (issue 14 §1). */
export interface ValueSchema {
  enum?: readonly string[];
  maxLength?: number;
  /** A regular expression (ECMA-262, as JSON Schema reads it) every accepted value matches. */
  pattern?: string;
  example?: string;
}
type Validate = SettingDef['validate'] & { schema?: ValueSchema };

/** Attaches the documented schema to a validator (read by valueSchema()). */
export function withSchema(validate: SettingDef['validate'], schema: ValueSchema): Validate {
  return Object.assign(validate, { schema });
}

/** The schema a setting's value documents: its validator's (enum, maxLength), or nothing. */
export function valueSchema(def: SettingDef): ValueSchema {
  return (def.validate as Validate).schema ?? {};
}

export type ChangeListener = (changed: string[], all: Readonly<Record<string, string>>) => void;

export const validators = {
  oneOf: (values: readonly string[]) =>
    withSchema(
      (v: string, key: string) => {
        if (!values.includes(v)) throw AppError.badRequest(`${key} must be one of ${values.join(', ')}`, `body.${key}`);
        return v;
      },
      { enum: values },
    ),
  positiveInt:
    (max = Number.MAX_SAFE_INTEGER) =>
    (v: string, key: string) => {
      if (!/^\d+$/.test(v.trim()) || Number(v) < 1 || Number(v) > max) {
        throw AppError.badRequest(
          `${key} must be a positive integer${max < Number.MAX_SAFE_INTEGER ? ` up to ${max}` : ''}`,
          `body.${key}`,
        );
      }
      return String(Number(v));
    },
  nonNegativeInt:
    (max = Number.MAX_SAFE_INTEGER) =>
    (v: string, key: string) => {
      if (!/^\d+$/.test(v.trim()) || Number(v) > max)
        throw AppError.badRequest(`${key} must be an integer from 0 to ${max}`, `body.${key}`);
      return String(Number(v));
    },
  bool: () =>
    withSchema(
      (v: string, key: string) => {
        if (v !== 'true' && v !== 'false') throw AppError.badRequest(`${key} must be true or false`, `body.${key}`);
        return v;
      },
      { enum: ['true', 'false'] },
    ),
  text: (maxLength = 1024, pattern?: RegExp) =>
    withSchema(
      (v: string, key: string) => {
        if (v.length > maxLength || (pattern && v !== '' && !pattern.test(v)))
          throw AppError.badRequest(`${key} is not valid`, `body.${key}`);
        return v;
      },
      { maxLength },
    ),
};

export class SettingsService {
  private readonly defs = new Map<string, SettingDef>();
  private readonly rules: SettingsRule[] = [];
  private values: Record<string, string> = {};
  private view: Record<string, string> | undefined;
  private readonly listeners: ChangeListener[] = [];
  private readonly bucket: Bucket;
  private following = false;

  /** The record `recordKey` of bucket `bucketName` holds every setting, one string per key. */
  constructor(
    private readonly store: KvStore,
    private readonly box: SecretBox,
    private readonly recordKey = 'settings',
    private readonly bucketName = 'settings',
  ) {
    this.bucket = store.bucket(bucketName);
  }

  define(key: string, def: SettingDef): this {
    this.defs.set(key, def);
    return this;
  }

  /** Adds a rule over several keys; throws (a programming error) on an undefined key or defaults that break it. */
  rule(rule: SettingsRule): this {
    const undefinedKey = rule.keys.find((k) => !this.defs.has(k));
    if (undefinedKey !== undefined) throw new Error(`settings rule on an undefined key: ${undefinedKey}`);
    const defaults = Object.fromEntries([...this.defs].map(([k, d]) => [k, d.default]));
    const breach = rule.check(defaults, new Set());
    if (breach) throw new Error(`the defaults break a settings rule: ${breach.message}`);
    this.rules.push(rule);
    return this;
  }

  definitions(): ReadonlyMap<string, SettingDef> {
    return this.defs;
  }

  /**
   * Loads the stored values, and from then on follows the changes other instances store (docs/cluster.md): a changed
   * value reaches the listeners as if it had been updated here.
   */
  async load(log?: SettingsLog): Promise<void> {
    if (!this.following) {
      this.following = true;
      this.store.watch(this.bucketName, async (k) => {
        if (k !== undefined && k !== this.recordKey) return;
        const before = this.values;
        await this.loadValues(log);
        const changed = Object.keys(this.values).filter((key) => this.values[key] !== before[key]);
        if (changed.length > 0) for (const fn of this.listeners) fn(changed, this.values);
      });
    }
    await this.loadValues(log);
  }

  private async loadValues(log?: SettingsLog): Promise<void> {
    const stored = (await this.bucket.get<Record<string, unknown>>(this.recordKey)) ?? {};
    const values: Record<string, string> = {};
    const kept = new Set<string>();
    for (const [k, d] of this.defs) {
      const r = stored[k] === undefined ? { value: d.default } : this.checkStored(k, d, stored[k]);
      if ('why' in r) this.logIgnored(log, k, r.why);
      else if (stored[k] !== undefined) kept.add(k);
      values[k] = 'why' in r ? d.default : r.value;
    }
    this.repairRules(values, kept, log);
    this.values = values;
    this.view = undefined;
  }

  /**
   * While the loaded values break a rule: the key it names goes back to its default if it was stored, else every
   * stored key of the rule does (each logged). Each step resets a stored key, and defaults satisfy every rule.
   */
  private repairRules(values: Record<string, string>, kept: Set<string>, log?: SettingsLog): void {
    for (let broken = this.breach(values, kept); broken; broken = this.breach(values, kept)) {
      const { rule, key, message } = broken;
      const reset = kept.has(key) ? [key] : rule.keys.filter((k) => kept.has(k));
      if (reset.length === 0) return; // unreachable while rules read only their keys: rule() checked the defaults
      for (const k of reset) {
        this.logIgnored(log, k, message);
        values[k] = this.defs.get(k)!.default;
        kept.delete(k);
      }
    }
  }

  private breach(
    values: Readonly<Record<string, string>>,
    given: ReadonlySet<string>,
  ): (RuleBreach & { rule: SettingsRule }) | undefined {
    for (const rule of this.rules) {
      const b = rule.check(values, given);
      if (b) return { ...b, rule };
    }
    return undefined;
  }

  private logIgnored(log: SettingsLog | undefined, setting: string, why: string): void {
    log?.error({ setting, record: this.recordKey, why }, 'stored setting ignored, default used');
  }

  /** A stored value as its validator normalises it, or why it cannot be used. Sealed secrets are not decrypted. */
  private checkStored(key: string, def: SettingDef, value: unknown): { value: string } | { why: string } {
    if (typeof value !== 'string') return { why: `not a string (${typeof value})` };
    if (def.secret) return value === '' || this.box.isSealed(value) ? { value } : { why: 'a secret stored unsealed' };
    try {
      return { value: def.validate(def.verbatim ? value : value.trim(), key) };
    } catch (e) {
      return { why: (e as Error).message };
    }
  }

  /** A setting's current value (secrets decrypted: for internal use only). */
  get(key: string): string | undefined {
    const v = this.values[key];
    if (v === undefined) return undefined;
    return this.defs.get(key)?.secret && this.box.isSealed(v) ? this.box.decrypt(v) : v;
  }

  /** Every setting as the API shows it: secrets only as `set`/`unset`. */
  publicView(): Record<string, string> {
    if (this.view) return { ...this.view };
    const out: Record<string, string> = {};
    for (const [k, d] of this.defs) out[k] = d.secret ? (this.values[k] ? 'set' : 'unset') : this.values[k]!;
    this.view = out;
    return { ...out };
  }

  onChange(fn: ChangeListener): void {
    this.listeners.push(fn);
  }

  async update(patch: Record<string, unknown>): Promise<Record<string, string>> {
    const keys = Object.keys(patch);
    if (keys.length === 0) throw AppError.badRequest('no settings given', 'body');
    const next = { ...this.values };
    for (const k of keys) {
      const def = this.defs.get(k);
      if (!def) throw AppError.badRequest(`${k} is not a known setting`, `body.${k}`);
      const raw = patch[k];
      if (typeof raw !== 'string') throw AppError.badRequest(`${k} must be a string`, `body.${k}`);
      const v = def.validate(def.verbatim ? raw : raw.trim(), k);
      next[k] = def.secret && v !== '' ? this.box.encrypt(v) : v;
    }
    const broken = this.breach(next, new Set(keys));
    if (broken) throw AppError.badRequest(broken.message, `body.${broken.key}`);
    await this.bucket.put(this.recordKey, next);
    this.values = next;
    this.view = undefined;
    for (const fn of this.listeners) fn(keys, this.values);
    return this.publicView();
  }
}
