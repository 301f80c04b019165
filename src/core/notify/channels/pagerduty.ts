/**
 * PagerDuty Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/):
 * POST https://events.pagerduty.com/v2/enqueue with `{ routing_key, event_action, dedup_key, payload }`.
 * A problem is a `trigger` with one dedup_key per monitor (re-alerts update the same alert), a recovery a `resolve`
 * of that key. A test triggers an `info` event under its own key and resolves it at once. PagerDuty answers 202;
 * 400 invalid event (not retryable), 429 throttled and 5xx (retryable).
 */
import { Type } from '@sinclair/typebox';
import type { Alert, SendContext } from '../channel.js';
import { alertTitle, truncate } from '../alert-text.js';
import { assertOk, invalidHttpsUrl, postJson } from '../http-post.js';
import {
  type ChannelDefinition,
  type WebhookChannelDeps,
  BoolString,
  DEFAULT_SEND_TIMEOUT_MS,
} from '../channel-kit.js';

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

export interface PagerDutySettings {
  enabled?: string;
  routingKey?: string;
  /** Overridable for tests and EU service regions (https://events.eu.pagerduty.com/v2/enqueue). */
  eventsUrl?: string;
}

export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

/** Our status → PagerDuty severity. */
export function pagerDutySeverity(status: string): PagerDutySeverity {
  switch (status) {
    case 'CRITICAL':
    case 'DOWN':
      return 'critical';
    case 'MAJOR':
    case 'ERROR':
    case 'EXCEPTION':
      return 'error';
    case 'MINOR':
      return 'warning';
    default:
      return 'info';
  }
}

/** One incident key per monitor (≤ 255 chars). */
export function pagerDutyDedupKey(alert: Alert): string {
  return truncate(`sentinel/${alert.monitor.type}/${alert.monitor.name}`, 255);
}

/** The Events API v2 body (pure). */
export function buildPagerDutyEvent(
  alert: Alert,
  routingKey: string,
  dedupKey = pagerDutyDedupKey(alert),
): Record<string, unknown> {
  if (alert.kind === 'recovery') return { routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey };
  const m = alert.monitor;
  const custom: Record<string, unknown> = { status: alert.status, monitorType: m.type };
  if (alert.previousStatus) custom.previousStatus = alert.previousStatus;
  if (alert.message) custom.message = truncate(alert.message, 2000);
  if (alert.responseTimeMs !== undefined) custom.responseTimeMs = alert.responseTimeMs;
  if (m.location) custom.location = m.location;
  if (m.tags?.length) custom.tags = m.tags;
  return {
    routing_key: routingKey,
    event_action: 'trigger',
    dedup_key: dedupKey,
    payload: {
      summary: truncate(alertTitle(alert), 1024),
      source: m.probe || m.location || 'sentinel-monitoring',
      severity: alert.kind === 'test' ? 'info' : pagerDutySeverity(alert.status),
      timestamp: new Date(alert.timestampMs).toISOString(),
      component: m.name,
      group: m.tags?.[0] ?? m.probe ?? m.type,
      class: m.type,
      custom_details: custom,
    },
  };
}

export function createPagerDutyChannel(deps: WebhookChannelDeps = {}): ChannelDefinition<PagerDutySettings> {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  const post = async (body: Record<string, unknown>, s: PagerDutySettings, ctx: SendContext): Promise<void> => {
    const res = await postJson(s.eventsUrl || PAGERDUTY_EVENTS_URL, body, 'pagerduty', {
      timeoutMs,
      signal: ctx.signal,
      agent: deps.agent,
    });
    assertOk(res, 'pagerduty', Date.now());
  };
  return {
    id: 'pagerduty',
    settings: Type.Object(
      {
        enabled: Type.Optional(BoolString),
        routingKey: Type.Optional(
          Type.String({ maxLength: 64, description: 'Events API v2 integration (routing) key (secret)' }),
        ),
        eventsUrl: Type.Optional(
          Type.String({ maxLength: 2048, description: `Events API endpoint, default ${PAGERDUTY_EVENTS_URL}` }),
        ),
      },
      { additionalProperties: false },
    ),
    secretFields: ['routingKey'],
    requiredWhenEnabled: ['routingKey'],
    defaults: { eventsUrl: PAGERDUTY_EVENTS_URL },
    validate(s) {
      if (s.routingKey !== undefined && s.routingKey !== '' && !/^[A-Za-z0-9]{32}$/.test(s.routingKey)) {
        return { field: 'routingKey', message: 'routingKey must be the 32-character integration key' };
      }
      if (s.eventsUrl !== undefined && s.eventsUrl !== '') {
        const bad = invalidHttpsUrl(s.eventsUrl);
        if (bad) return { field: 'eventsUrl', message: `eventsUrl ${bad}` };
      }
      return undefined;
    },
    async send(alert: Alert, s: PagerDutySettings, ctx: SendContext): Promise<void> {
      const key = s.routingKey ?? '';
      if (alert.kind !== 'test') return post(buildPagerDutyEvent(alert, key), s, ctx);
      const dedup = `sentinel/test/${alert.timestampMs}`;
      await post(buildPagerDutyEvent(alert, key, dedup), s, ctx);
      await post({ routing_key: key, event_action: 'resolve', dedup_key: dedup }, s, ctx);
    },
  };
}
