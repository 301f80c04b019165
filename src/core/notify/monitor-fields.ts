/**
 * The per-monitor alerting fields derived from the channel registry: `notifyChannels` (routing: which channels a
 * monitor alerts to) and every channel's own fields (opt-outs such as notifySlack). The monitor service merges them
 * into the common fields of every monitor type and validates them with `checkChannelMonitorFields`.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ChannelDefinition } from './channel.js';
import { CHANNEL_TAG_RE } from './channel-kit.js';
import { CHANNELS } from './registry.js';

export const ROUTING_FIELD = 'notifyChannels';
const TAG_PREFIX = 'tag:';

/** Parsed `notifyChannels`: channel ids and channel tags; undefined when unset (the defaults apply). */
export interface Routing {
  ids: Set<string>;
  tags: Set<string>;
}

export function parseRouting(value: string | undefined): Routing | undefined {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return undefined;
  const r: Routing = { ids: new Set(), tags: new Set() };
  for (const it of items) {
    if (it.startsWith(TAG_PREFIX)) r.tags.add(it.slice(TAG_PREFIX.length));
    else r.ids.add(it);
  }
  return r;
}

/** Tags of a channel's settings (`tags`: comma-separated). */
export function channelTags(tags: string | undefined): string[] {
  return (tags ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** Every per-monitor alerting field the channels add, with its schema (merged into the monitors' common fields). */
export function channelMonitorFields(list: readonly ChannelDefinition[] = CHANNELS): Record<string, TSchema> {
  const out: Record<string, TSchema> = {
    [ROUTING_FIELD]: Type.String({
      maxLength: 1024,
      description:
        `comma-separated channels this monitor alerts to: channel ids (${list.map((c) => c.id).join(', ')}) ` +
        'and/or tag:<name> (every channel whose tags setting has <name>); empty = every enabled channel. ' +
        'Opt-outs (notify<Channel> false) and email recipients still apply',
    }),
  };
  for (const c of list) Object.assign(out, c.monitorFields);
  return out;
}

/** Validates the alerting fields of a monitor config; returns the first bad field and why. */
export function checkChannelMonitorFields(
  c: Readonly<Record<string, string | undefined>>,
  list: readonly ChannelDefinition[] = CHANNELS,
): { field: string; message: string } | undefined {
  for (const ch of list) {
    for (const [field, schema] of Object.entries(ch.monitorFields)) {
      const v = c[field];
      if (v !== undefined && !Value.Check(schema, v))
        return { field, message: `${field}: ${Value.Errors(schema, v).First()?.message ?? 'invalid value'}` };
    }
  }
  const routing = parseRouting(c[ROUTING_FIELD]);
  if (!routing) return undefined;
  const ids = new Set(list.map((ch) => ch.id));
  for (const id of routing.ids)
    if (!ids.has(id))
      return { field: ROUTING_FIELD, message: `unknown channel ${id}; channels: ${[...ids].join(', ')}` };
  for (const t of routing.tags)
    if (!CHANNEL_TAG_RE.test(t))
      return { field: ROUTING_FIELD, message: `tag:${t}: a tag is 1-64 of A-Z a-z 0-9 _ . -` };
  return undefined;
}
