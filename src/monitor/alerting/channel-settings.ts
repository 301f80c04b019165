/**
 * Service-wide settings of the chat and paging channels (bucket 'alert_channels', one record per channel id), held
 * decrypted in memory for the delivery lanes. Secret fields (webhook URLs, routing keys) are sealed with the secret box
 * at rest and shown only as 'set' / 'unset' (the convention of GET /setting). Email has no record here: it is
 * configured through POST /setsmtpvault and read through `getSmtp`.
 */
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../core/errors.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import type { KvStore } from '../../core/storage/kv-store.js';

export const CHANNEL_BUCKET = 'alert_channels';
export type Settings = Record<string, string>;

export interface ChannelSettingsDeps {
  store: KvStore;
  secrets: SecretBox;
  channels: ChannelRegistry;
  /** Decrypted SMTP settings of POST /setsmtpvault. */
  getSmtp: () => Settings | undefined;
}

export interface ChannelSettings {
  load(): Promise<void>;
  /** Decrypted settings (defaults applied) whatever `enabled` says; undefined for an unknown channel. */
  current(id: string): Settings | undefined;
  /** Settings of an enabled, fully configured channel; undefined otherwise. */
  active(id: string): Settings | undefined;
  /** Every channel's settings with secrets masked. */
  view(): Record<string, Settings>;
  /** Merges a patch ('' clears a field, 'set' keeps a secret), validates, stores; returns the masked view. */
  set(id: string, patch: Record<string, unknown>): Promise<Settings>;
  /** The field missing for a send, if any. */
  missing(id: string, s: Settings): string | undefined;
}

export function createChannelSettings(d: ChannelSettingsDeps): ChannelSettings {
  const bucket = d.store.bucket(CHANNEL_BUCKET);
  const values = new Map<string, Settings>();

  const channel = (id: string) => {
    const c = d.channels.get(id);
    if (!c) throw AppError.notFound(`unknown channel ${id}; channels: ${[...d.channels.keys()].join(', ')}`);
    return c;
  };
  const mask = (id: string, s: Settings): Settings => {
    const out: Settings = {};
    const secret = new Set(d.channels.get(id)?.secretFields ?? []);
    for (const [k, v] of Object.entries(s)) out[k] = secret.has(k) ? (v ? 'set' : 'unset') : v;
    return out;
  };
  const withDefaults = (id: string, s: Settings | undefined): Settings => {
    const c = d.channels.get(id)!;
    const out: Settings = { enabled: 'false', ...c.defaults, ...s };
    for (const k of c.secretFields) out[k] ??= '';
    return out;
  };
  const missing = (id: string, s: Settings): string | undefined =>
    d.channels.get(id)?.requiredWhenEnabled.find((k) => !s[k]);

  return {
    async load() {
      values.clear();
      for await (const e of bucket.range<Settings>()) {
        const id = String(e.key);
        const c = d.channels.get(id);
        if (!c) continue;
        const plain: Settings = { ...e.value };
        for (const k of c.secretFields)
          if (plain[k] && d.secrets.isSealed(plain[k])) plain[k] = d.secrets.decrypt(plain[k]!);
        values.set(id, plain);
      }
    },
    current(id) {
      if (!d.channels.has(id)) return undefined;
      if (id === 'email') return d.getSmtp();
      return withDefaults(id, values.get(id));
    },
    active(id) {
      const s = this.current(id);
      if (!s) return undefined;
      const on = id === 'email' ? s.smtpEnabled === 'true' : s.enabled === 'true';
      return on && !missing(id, s) ? s : undefined;
    },
    view() {
      const out: Record<string, Settings> = {};
      for (const id of d.channels.keys()) {
        const s = this.current(id) ?? {};
        out[id] = id === 'email' ? { ...mask(id, s), configuredVia: 'POST /setsmtpvault' } : mask(id, s);
      }
      return out;
    },
    async set(id, patch) {
      const c = channel(id);
      if (id === 'email') throw AppError.badRequest('email is configured through POST /setsmtpvault', 'params.channel');
      const next: Settings = { ...values.get(id) };
      for (const [k, raw] of Object.entries(patch)) {
        if (!(k in c.settings.properties)) throw AppError.badRequest(`${k} is not a ${id} setting`, `body.${k}`);
        if (typeof raw !== 'string') throw AppError.badRequest(`${k} must be a string`, `body.${k}`);
        const v = raw.trim();
        if (c.secretFields.includes(k) && v === 'set') continue;
        if (v === '') delete next[k];
        else next[k] = v;
      }
      const err = Value.Errors(c.settings, next).First();
      if (err) {
        const field = err.path.replace(/^\//, '') || Object.keys(patch)[0] || '';
        throw AppError.badRequest(`${field}: ${err.message}`, `body.${field}`);
      }
      const bad = c.validate?.(next);
      if (bad) throw AppError.badRequest(bad.message, `body.${bad.field}`);
      const full = withDefaults(id, next);
      const need = full.enabled === 'true' ? missing(id, full) : undefined;
      if (need) throw AppError.badRequest(`${need} is required to enable ${id}`, `body.${need}`);
      const sealed: Settings = { ...next };
      for (const k of c.secretFields) if (sealed[k]) sealed[k] = d.secrets.encrypt(sealed[k]!);
      await bucket.put(id, sealed);
      values.set(id, next);
      return mask(id, full);
    },
    missing,
  };
}
