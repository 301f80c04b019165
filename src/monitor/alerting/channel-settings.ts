/**
 * Service-wide settings of the channels (bucket 'alert_channels', one record per channel id), held decrypted in memory
 * for the delivery lanes. What a channel's settings are, which are secrets, required and defaulted comes from its
 * declaration in the registry. Secret fields are sealed with the secret box at rest and shown only as 'set' / 'unset'
 * (the convention of GET /setting). A channel declared `external` (email) has no record here: its settings come from
 * `external[id]()` (the SMTP settings of POST /setsmtpvault) and are changed through that endpoint.
 */
import { Value } from '@sinclair/typebox/value';
import { AppError } from '../../core/errors.js';
import type { ChannelDefinition } from '../../core/notify/channel.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import type { KvStore } from '../../core/storage/kv-store.js';

export const CHANNEL_BUCKET = 'alert_channels';
export type Settings = Record<string, string>;

export interface ChannelSettingsDeps {
  store: KvStore;
  secrets: SecretBox;
  channels: ChannelRegistry;
  /** Settings of the channels declared `external`, by id (email: the decrypted SMTP settings). */
  external: Readonly<Record<string, () => Settings | undefined>>;
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

  const channel = (id: string): ChannelDefinition => {
    const c = d.channels.get(id);
    if (!c) throw AppError.notFound(`unknown channel ${id}; channels: ${d.channels.ids().join(', ')}`);
    return c;
  };
  const mask = (c: ChannelDefinition, s: Settings): Settings => {
    const out: Settings = {};
    for (const [k, v] of Object.entries(s)) out[k] = c.secretFields.includes(k) ? (v ? 'set' : 'unset') : v;
    if (c.external) out.configuredVia = c.external.via;
    return out;
  };
  const withDefaults = (c: ChannelDefinition, s: Settings | undefined): Settings => {
    const out: Settings = { enabled: 'false', ...c.defaults, ...s };
    for (const k of c.secretFields) out[k] ??= '';
    return out;
  };
  const missing = (id: string, s: Settings): string | undefined =>
    d.channels.get(id)?.requiredWhenEnabled.find((k) => !s[k]);

  const loadAll = async (): Promise<void> => {
    const next = new Map<string, Settings>();
    for await (const e of bucket.range<Settings>()) {
      const c = d.channels.get(String(e.key));
      if (!c || c.external) continue;
      const plain: Settings = { ...e.value };
      for (const k of c.secretFields)
        if (plain[k] && d.secrets.isSealed(plain[k])) plain[k] = d.secrets.decrypt(plain[k]);
      next.set(c.id, plain);
    }
    values.clear();
    for (const [id, v] of next) values.set(id, v);
  };
  // Channel settings another instance stores (a cluster: docs/cluster.md): they are few, reload them all.
  d.store.watch(CHANNEL_BUCKET, () => loadAll());

  return {
    load: loadAll,
    current(id) {
      const c = d.channels.get(id);
      if (!c) return undefined;
      if (c.external) return d.external[id]?.();
      return withDefaults(c, values.get(id));
    },
    active(id) {
      const c = d.channels.get(id);
      const s = this.current(id);
      if (!c || !s) return undefined;
      const on = s[c.external?.enabledField ?? 'enabled'] === 'true';
      return on && !missing(id, s) ? s : undefined;
    },
    view() {
      const out: Record<string, Settings> = {};
      for (const c of d.channels.list()) out[c.id] = mask(c, this.current(c.id) ?? {});
      return out;
    },
    async set(id, patch) {
      const c = channel(id);
      if (c.external) throw AppError.badRequest(`${id} is configured through ${c.external.via}`, 'params.channel');
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
      const full = withDefaults(c, next);
      const need = full.enabled === 'true' ? missing(id, full) : undefined;
      if (need) throw AppError.badRequest(`${need} is required to enable ${id}`, `body.${need}`);
      const sealed: Settings = { ...next };
      for (const k of c.secretFields) if (sealed[k]) sealed[k] = d.secrets.encrypt(sealed[k]);
      await bucket.put(id, sealed);
      values.set(id, next);
      return mask(c, full);
    },
    missing,
  };
}
