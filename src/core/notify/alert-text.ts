/** Wording shared by every channel, so an alert reads the same in a mail, a chat message and an incident. */
import type { Alert } from './channel.js';

export function monitorLabel(alert: Alert): string {
  const m = alert.monitor;
  return m.displayName && m.displayName !== m.name ? `${m.displayName} (${m.name})` : m.name;
}

/** One-line title: "[DOWN] Shop API is DOWN", "[RECOVERED] Shop API is OK", "[ACK] ...", "[TEST] ...". */
export function alertTitle(alert: Alert): string {
  const label = monitorLabel(alert);
  if (alert.kind === 'test') return `[TEST] Test notification from Sentinel monitoring`;
  if (alert.kind === 'recovery') return `[RECOVERED] ${label} is ${alert.status}`;
  if (alert.kind === 'acknowledge')
    return `[ACK] ${label} (${alert.status}) acknowledged by ${alert.acknowledgement?.by ?? 'a user'}`;
  const was = alert.previousStatus && alert.previousStatus !== 'OK' ? ` (was ${alert.previousStatus})` : '';
  return `[${alert.status}] ${label} is ${alert.status}${was}`;
}

/** Ordered label/value pairs describing the alert (chat fields, card facts, mail table). */
export function alertFacts(alert: Alert): Array<[string, string]> {
  const m = alert.monitor;
  const facts: Array<[string, string]> = [
    ['Monitor', m.name],
    ['Type', m.type],
    ['Status', alert.status],
  ];
  if (alert.previousStatus) facts.push(['Previous status', alert.previousStatus]);
  if (alert.responseTimeMs !== undefined) facts.push(['Response time', `${Math.round(alert.responseTimeMs)} ms`]);
  if (m.probe) facts.push(['Probe', m.probe]);
  if (m.location) facts.push(['Location', m.location]);
  if (m.tags && m.tags.length > 0) facts.push(['Tags', m.tags.join(', ')]);
  if (alert.acknowledgement) {
    facts.push(['Acknowledged by', alert.acknowledgement.by]);
    if (alert.acknowledgement.note) facts.push(['Note', alert.acknowledgement.note]);
  }
  facts.push(['Time', new Date(alert.timestampMs).toISOString()]);
  return facts;
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Escapes &, < and > (Slack mrkdwn, Telegram HTML, Google Chat card text); `quotes` also escapes " (HTML attributes). */
export function escapeMarkup(text: string, quotes = false): string {
  const s = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return quotes ? s.replace(/"/g, '&quot;') : s;
}
