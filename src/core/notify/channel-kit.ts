/**
 * What channel files share beyond the contract in channel.ts: `defineChannel` (adds the common settings `enabled` and
 * `tags`, derives the secret fields, checks the declaration), schema helpers (`Secret`, `BoolString`, `OptOut`), the
 * JSON/form senders bound to the service's network (`sendJson`, `sendForm`), URL checks, and severity lookup.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type {
  Alert,
  AlertKind,
  ChannelDefinition,
  ChannelPool,
  ChannelRoute,
  ChannelSettingsValues,
  MonitorFieldsView,
  SendContext,
  SeverityKey,
  SeverityMap,
} from './channel.js';
import { SEVERITY_KEYS } from './channel.js';
import { type HttpPostResult, assertOk, httpRequest, invalidHttpsUrl } from './http-post.js';

export const DEFAULT_SEND_TIMEOUT_MS = 10_000;

/** 'true' | 'false' as the spec writes booleans. */
export const BoolString = Type.Union([Type.Literal('true'), Type.Literal('false')]);

/** Marks a settings field as a secret: sealed at rest, write-only over the API (shown as set / unset). */
export function Secret<T extends TSchema>(schema: T): T {
  return { ...schema, 'x-secret': true };
}

export function isSecret(schema: unknown): boolean {
  return (schema as Record<string, unknown>)['x-secret'] === true;
}

/** Comma-separated channel tags a monitor can route to with `notifyChannels: tag:<name>`. */
export const CHANNEL_TAG_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** The per-monitor opt-out field of a channel and its routing rule ('false' = this monitor never uses the channel). */
export function OptOut(
  field: string,
  displayName: string,
): { monitorFields: Record<string, TSchema>; route(m: MonitorFieldsView): ChannelRoute | undefined } {
  return {
    monitorFields: {
      [field]: Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('')], {
        description: `false opts this monitor out of ${displayName} (default true)`,
      }),
    },
    route: (m) => (m[field] === 'false' ? undefined : {}),
  };
}

/** A channel declaration without what defineChannel derives or adds. */
export type ChannelSpec = Omit<
  ChannelDefinition,
  'secretFields' | 'kinds' | 'defaults' | 'example' | 'settings' | 'route' | 'monitorFields'
> & {
  /** The channel's own settings (defineChannel adds `enabled` and `tags` unless the channel is `external`). */
  settings: Record<string, TSchema>;
  defaults?: Readonly<ChannelSettingsValues>;
  example: Readonly<ChannelSettingsValues>;
  kinds?: readonly AlertKind[];
  monitorFields: Readonly<Record<string, TSchema>>;
  route(monitor: MonitorFieldsView): ChannelRoute | undefined;
};

const ID_RE = /^[a-z][a-z0-9]{1,31}$/;

/** Completes and checks a channel declaration; throws on a declaration error (a bug caught by the meta-test). */
export function defineChannel(spec: ChannelSpec): ChannelDefinition {
  const own = spec.settings;
  const common: Record<string, TSchema> = spec.external
    ? {}
    : {
        enabled: Type.Optional({ ...BoolString, description: 'true sends alerts through this channel' }),
        tags: Type.Optional(
          Type.String({
            maxLength: 256,
            pattern: '^\\s*([A-Za-z0-9_.-]{1,64}(\\s*,\\s*[A-Za-z0-9_.-]{1,64})*)?\\s*$',
            description: 'comma-separated tags; a monitor with notifyChannels "tag:<name>" alerts here',
          }),
        ),
      };
  const props: Record<string, TSchema> = { ...common };
  for (const [k, s] of Object.entries(own)) props[k] = Type.Optional(s);
  const settings: TObject = Type.Object(props, { additionalProperties: false, title: spec.id });
  const secretFields = Object.entries(own)
    .filter(([, s]) => isSecret(s))
    .map(([k]) => k);
  const def: ChannelDefinition = {
    ...spec,
    settings,
    secretFields,
    defaults: spec.defaults ?? {},
    kinds: spec.kinds ?? ['problem', 'recovery', 'test'],
  };
  const problems: string[] = [];
  if (!ID_RE.test(def.id)) problems.push(`id must match ${ID_RE}`);
  for (const k of [...def.requiredWhenEnabled, ...Object.keys(def.defaults), ...Object.keys(def.example)])
    if (!(k in props)) problems.push(`${k} is not one of its settings`);
  for (const k of Object.keys(def.defaults)) if (secretFields.includes(k)) problems.push(`secret ${k} has a default`);
  for (const k of SEVERITY_KEYS) if (!def.severity[k]) problems.push(`severity has no ${k}`);
  const ep = def.endpoint;
  for (const k of ep.kind === 'https' ? [ep.setting] : [ep.host, ep.port])
    if (!(k in props)) problems.push(`endpoint ${k} is not one of its settings`);
  if (problems.length) throw new Error(`channel ${def.id}: ${problems.join('; ')}`);
  return def;
}

/** The severity-map key of an alert: TEST for a test, OK for a recovery, else the status (ERROR when unknown). */
export function severityKey(alert: Alert): SeverityKey {
  if (alert.kind === 'test') return 'TEST';
  if (alert.kind === 'recovery') return 'OK';
  return (SEVERITY_KEYS as readonly string[]).includes(alert.status) ? (alert.status as SeverityKey) : 'ERROR';
}

export function severityOf(alert: Alert, map: SeverityMap): string {
  return map[severityKey(alert)];
}

/** The https check of a URL setting, as a validate() result. Empty values pass (required-ness is checked apart). */
export function checkHttpsUrls(
  s: ChannelSettingsValues,
  fields: readonly string[],
): { field: string; message: string } | undefined {
  for (const f of fields) {
    if (s[f] === undefined || s[f] === '') continue;
    const bad = invalidHttpsUrl(s[f]);
    if (bad) return { field: f, message: `${f} ${bad}` };
  }
  return undefined;
}

/** Joins a base URL (no trailing slash needed) and a path. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}${path.startsWith('/') ? '' : '/'}${path}`;
}

interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
}

/** One request through the service's network; resolves any answer (use assertOk or check it yourself). */
export function request(
  ctx: SendContext,
  vendor: string,
  url: string,
  body: string | Buffer | undefined,
  opts: SendOptions = {},
): Promise<HttpPostResult> {
  return httpRequest(url, body, vendor, {
    timeoutMs: ctx.net.timeoutMs,
    signal: ctx.signal,
    agent: ctx.net.agent,
    method: opts.method,
    headers: opts.headers,
  });
}

/** POSTs (or `method`) a JSON body; a non-2xx answer throws the ChannelError it means. */
export async function sendJson(
  ctx: SendContext,
  vendor: string,
  url: string,
  payload: unknown,
  opts: SendOptions = {},
): Promise<HttpPostResult> {
  const res = await request(ctx, vendor, url, JSON.stringify(payload), {
    ...opts,
    headers: { 'content-type': 'application/json', ...opts.headers },
  });
  assertOk(res, vendor, Date.now());
  return res;
}

/** POSTs an application/x-www-form-urlencoded body; a non-2xx answer throws the ChannelError it means. */
export async function sendForm(
  ctx: SendContext,
  vendor: string,
  url: string,
  fields: Record<string, string>,
): Promise<HttpPostResult> {
  const body = new URLSearchParams(fields).toString();
  const res = await request(ctx, vendor, url, body, {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assertOk(res, vendor, Date.now());
  return res;
}

/** Times a probe: resolves {ok, latencyMs, message?} and turns a thrown ChannelError into ok: false. */
export async function timedProbe(fn: () => Promise<string | void>): Promise<{
  ok: boolean;
  latencyMs: number;
  message?: string;
}> {
  const t0 = performance.now();
  try {
    const message = await fn();
    return { ok: true, latencyMs: Math.round(performance.now() - t0), ...(message ? { message } : {}) };
  } catch (err) {
    const message = err instanceof Error ? err.message : 'probe failed';
    return { ok: false, latencyMs: Math.round(performance.now() - t0), message };
  }
}

/**
 * A channel that POSTs one JSON body to a secret incoming-webhook URL (Slack, Teams, Discord, Google Chat,
 * Mattermost): the URL setting, its https check and the send; the channel supplies its payload builder.
 */
export function webhookSettings(urlDescription: string, maxUrlLength = 2048): Record<string, TSchema> {
  return { webhookUrl: Secret(Type.String({ maxLength: maxUrlLength, description: `${urlDescription} (secret)` })) };
}

export function validateWebhookUrl(s: ChannelSettingsValues): { field: string; message: string } | undefined {
  return checkHttpsUrls(s, ['webhookUrl']);
}

/** The pool of one registry: one value per slot, replaced when its key changes, all closed by `closeAll`. */
export function createChannelPool(): ChannelPool & { closeAll(): void } {
  const slots = new Map<string, { key: string; value: unknown; close: (v: unknown) => void }>();
  const drop = (slot: string): void => {
    const cur = slots.get(slot);
    if (!cur) return;
    slots.delete(slot);
    try {
      cur.close(cur.value);
    } catch {
      /* closing a broken resource */
    }
  };
  return {
    slot<T>(slot: string, key: string, create: () => T, close: (value: T) => void): T {
      const cur = slots.get(slot);
      if (cur?.key === key) return cur.value as T;
      drop(slot);
      const value = create();
      slots.set(slot, { key, value, close: close as (v: unknown) => void });
      return value;
    },
    drop,
    closeAll() {
      for (const slot of [...slots.keys()]) drop(slot);
    },
  };
}
