/**
 * PagerDuty Events API v2 (https://developer.pagerduty.com/docs/events-api-v2/trigger-events/):
 * POST https://events.pagerduty.com/v2/enqueue with `{ routing_key, event_action, dedup_key, payload }`.
 * A problem is a `trigger` with one dedup_key per monitor (re-alerts update the same alert), a recovery a `resolve`
 * of that key, an acknowledgement in Sentinel an `acknowledge` of it. A test triggers an `info` event under its own
 * key and resolves it at once. PagerDuty answers 202; 400 invalid event (not retryable), 429 throttled and 5xx
 * (retryable). `eventsUrl` is overridable (EU region: https://events.eu.pagerduty.com/v2/enqueue; tests).
 */
import { Type } from '@sinclair/typebox';
import type { Alert } from '../channel.js';
import { alertTitle, truncate } from '../alert-text.js';
import { OptOut, Secret, checkHttpsUrls, defineChannel, sendJson, severityOf } from '../channel-kit.js';

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/** Our status → PagerDuty severity (OK: the event is a resolve). */
const SEVERITY = {
  MINOR: 'warning',
  MAJOR: 'error',
  CRITICAL: 'critical',
  DOWN: 'critical',
  ERROR: 'error',
  EXCEPTION: 'error',
  OK: 'resolve',
  TEST: 'info',
} as const;

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
  if (alert.kind === 'acknowledge')
    return { routing_key: routingKey, event_action: 'acknowledge', dedup_key: dedupKey };
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
      severity: severityOf(alert, SEVERITY),
      timestamp: new Date(alert.timestampMs).toISOString(),
      component: m.name,
      group: m.tags?.[0] ?? m.probe ?? m.type,
      class: m.type,
      custom_details: custom,
    },
  };
}

export const pagerdutyChannel = defineChannel({
  id: 'pagerduty',
  displayName: 'PagerDuty',
  description: 'PagerDuty incidents through the Events API v2: trigger, acknowledge and resolve one alert per monitor',
  docsUrl: 'https://developer.pagerduty.com/docs/events-api-v2/overview/',
  settings: {
    routingKey: Secret(
      Type.String({ maxLength: 64, description: 'Events API v2 integration (routing) key, 32 characters (secret)' }),
    ),
    eventsUrl: Type.String({ maxLength: 2048, description: `Events API endpoint, default ${PAGERDUTY_EVENTS_URL}` }),
  },
  requiredWhenEnabled: ['routingKey'],
  defaults: { eventsUrl: PAGERDUTY_EVENTS_URL },
  example: { enabled: 'true', routingKey: 'R0123456789abcdef0123456789ABCDE', eventsUrl: PAGERDUTY_EVENTS_URL },
  endpoint: { kind: 'https', setting: 'eventsUrl' },
  ...OptOut('notifyPagerduty', 'PagerDuty'),
  severity: SEVERITY,
  kinds: ['problem', 'recovery', 'test', 'acknowledge'],
  validate(s) {
    if (s.routingKey !== undefined && s.routingKey !== '' && !/^[A-Za-z0-9]{32}$/.test(s.routingKey)) {
      return { field: 'routingKey', message: 'routingKey must be the 32-character integration key' };
    }
    return checkHttpsUrls(s, ['eventsUrl']);
  },
  async send(alert, s, ctx) {
    const key = s.routingKey ?? '';
    const url = s.eventsUrl || PAGERDUTY_EVENTS_URL;
    if (alert.kind !== 'test') {
      await sendJson(ctx, 'pagerduty', url, buildPagerDutyEvent(alert, key));
      return;
    }
    const dedup = `sentinel/test/${alert.timestampMs}`;
    await sendJson(ctx, 'pagerduty', url, buildPagerDutyEvent(alert, key, dedup));
    await sendJson(ctx, 'pagerduty', url, { routing_key: key, event_action: 'resolve', dedup_key: dedup });
  },
});
