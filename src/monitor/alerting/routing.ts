/**
 * Which channels an alert goes to, from the registry: every channel that is enabled (and fully configured), delivers
 * this kind of alert, is selected by the monitor's `notifyChannels` (when set: named ids or tag:<name> matching the
 * channel's `tags` setting; unset: every channel) and whose own per-monitor rule lets the monitor through (an opt-out
 * field, email's emailOnF + emailR).
 */
import type { AlertKind, MonitorFieldsView } from '../../core/notify/channel.js';
import { ROUTING_FIELD, channelTags, parseRouting } from '../../core/notify/monitor-fields.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';

export interface Target {
  channel: string;
  recipients?: string[];
}

export function resolveTargets(
  monitor: MonitorFieldsView,
  kind: AlertKind,
  registry: ChannelRegistry,
  active: (id: string) => Record<string, string> | undefined,
): Target[] {
  const routing = parseRouting(monitor[ROUTING_FIELD]);
  const out: Target[] = [];
  for (const ch of registry.list()) {
    if (!ch.kinds.includes(kind)) continue;
    const settings = active(ch.id);
    if (!settings) continue;
    if (routing && !routing.ids.has(ch.id) && !channelTags(settings.tags).some((t) => routing.tags.has(t))) continue;
    const route = ch.route(monitor);
    if (route) out.push({ channel: ch.id, ...(route.recipients ? { recipients: route.recipients } : {}) });
  }
  return out;
}
