/**
 * Opsgenie Alert API v2 (https://docs.opsgenie.com/docs/alert-api) with an API integration key
 * (`Authorization: GenieKey <apiKey>`). A problem creates an alert (POST /v2/alerts) with one `alias` per monitor, so
 * repeats and severity changes de-duplicate into the same alert (a changed priority is then set with PUT
 * /v2/alerts/{alias}/priority?identifierType=alias); a recovery closes it (POST .../close), an acknowledgement in
 * Sentinel acknowledges it (POST .../acknowledge) with who and the note. Opsgenie answers 202 (the request is queued);
 * 422 invalid (not retryable), 429 and 5xx (retryable). `apiUrl` is overridable (EU: https://api.eu.opsgenie.com;
 * tests). A test creates a P5 alert under its own alias and closes it.
 */
import { Type } from '@sinclair/typebox';
import type { Alert, ChannelSettingsValues, SendContext } from '../channel.js';
import { alertFacts, alertTitle, truncate } from '../alert-text.js';
import { OptOut, Secret, checkHttpsUrls, defineChannel, joinUrl, sendJson, severityOf } from '../channel-kit.js';

export const OPSGENIE_API_URL = 'https://api.opsgenie.com';

/** Opsgenie priority P1 (critical) … P5 (informational); OK: the alert is closed. */
const SEVERITY = {
  MINOR: 'P3',
  MAJOR: 'P2',
  CRITICAL: 'P1',
  DOWN: 'P1',
  ERROR: 'P2',
  EXCEPTION: 'P2',
  OK: 'close',
  TEST: 'P5',
} as const;

/** One alert per monitor (≤ 512 chars). */
export function opsgenieAlias(alert: Alert): string {
  return truncate(`sentinel:${alert.monitor.type}:${alert.monitor.name}`, 512);
}

const priorityOf = (status: string): string =>
  (SEVERITY as Record<string, string>)[status] && status !== 'OK'
    ? (SEVERITY as Record<string, string>)[status]!
    : 'P2';

/** The create-alert body (pure). */
export function buildOpsgenieAlert(alert: Alert, alias = opsgenieAlias(alert), team?: string): Record<string, unknown> {
  const m = alert.monitor;
  const tags = ['sentinel', alert.status, m.type, ...(m.tags ?? [])].map((t) => truncate(t, 50)).slice(0, 20);
  const details: Record<string, string> = {};
  for (const [k, v] of alertFacts(alert)) details[k] = truncate(v, 1000);
  return {
    message: truncate(alertTitle(alert), 130),
    alias,
    description: truncate(alert.message ?? alertTitle(alert), 15_000),
    priority: severityOf(alert, SEVERITY),
    source: 'Sentinel',
    entity: truncate(m.name, 512),
    tags,
    details,
    ...(team ? { responders: [{ type: 'team', name: team }] } : {}),
  };
}

/** The body of close / acknowledge (pure). */
export function buildOpsgenieAction(alert: Alert): Record<string, unknown> {
  const ack = alert.acknowledgement;
  if (ack)
    return {
      user: truncate(ack.by, 100),
      source: 'Sentinel',
      note: truncate(ack.note ?? 'acknowledged in Sentinel', 25_000),
    };
  return { user: 'Sentinel', source: 'Sentinel', note: truncate(`Recovered: ${alertTitle(alert)}`, 25_000) };
}

function api(s: ChannelSettingsValues, ctx: SendContext) {
  const headers = { authorization: `GenieKey ${s.apiKey ?? ''}` };
  const base = s.apiUrl || OPSGENIE_API_URL;
  const byAlias = (alias: string, action: string): string =>
    joinUrl(base, `/v2/alerts/${encodeURIComponent(alias)}/${action}?identifierType=alias`);
  return {
    create: (body: unknown) => sendJson(ctx, 'opsgenie', joinUrl(base, '/v2/alerts'), body, { headers }),
    act: (alias: string, action: 'close' | 'acknowledge', body: unknown) =>
      sendJson(ctx, 'opsgenie', byAlias(alias, action), body, { headers }),
    priority: (alias: string, priority: string) =>
      sendJson(ctx, 'opsgenie', byAlias(alias, 'priority'), { priority }, { headers, method: 'PUT' }),
  };
}

export const opsgenieChannel = defineChannel({
  id: 'opsgenie',
  displayName: 'Opsgenie',
  description: 'Opsgenie alerts through the Alert API: create (de-duplicated per monitor), acknowledge, close',
  docsUrl: 'https://docs.opsgenie.com/docs/alert-api',
  settings: {
    apiKey: Secret(Type.String({ maxLength: 128, description: 'API integration key (secret)' })),
    apiUrl: Type.String({ maxLength: 2048, description: `API base URL, default ${OPSGENIE_API_URL}` }),
    team: Type.String({ maxLength: 100, description: 'team name to route the alert to (responders); empty = none' }),
  },
  requiredWhenEnabled: ['apiKey'],
  defaults: { apiUrl: OPSGENIE_API_URL },
  example: { enabled: 'true', apiKey: 'eb243592-faa2-4ba2-a551q-1afdf565c889', apiUrl: OPSGENIE_API_URL },
  endpoint: { kind: 'https', setting: 'apiUrl' },
  ...OptOut('notifyOpsgenie', 'Opsgenie'),
  severity: SEVERITY,
  kinds: ['problem', 'recovery', 'test', 'acknowledge'],
  validate: (s) => checkHttpsUrls(s, ['apiUrl']),
  async send(alert, s, ctx) {
    const og = api(s, ctx);
    const alias = opsgenieAlias(alert);
    switch (alert.kind) {
      case 'recovery':
        await og.act(alias, 'close', buildOpsgenieAction(alert));
        return;
      case 'acknowledge':
        await og.act(alias, 'acknowledge', buildOpsgenieAction(alert));
        return;
      case 'test': {
        const testAlias = `sentinel:test:${alert.timestampMs}`;
        await og.create(buildOpsgenieAlert(alert, testAlias, s.team));
        await og.act(testAlias, 'close', buildOpsgenieAction(alert));
        return;
      }
      default: {
        await og.create(buildOpsgenieAlert(alert, alias, s.team));
        // A repeat of an open alert keeps its priority in Opsgenie: set it when the severity changed.
        const was = alert.previousStatus;
        if (was && was !== 'OK' && priorityOf(was) !== priorityOf(alert.status))
          await og.priority(alias, priorityOf(alert.status));
      }
    }
  },
});
