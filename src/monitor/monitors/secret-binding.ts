/**
 * A stored secret is bound to the target it was entered for (docs/security.md §2, review F2): an update that moves a
 * monitor to another target (its type's `secretTarget` fields: an http origin, a database server + database + login +
 * query, an SNMP agent) keeps no stored secret. Every secret field that is set and that the request does not supply
 * again is named in a 400, so pointing an admin's monitor at one's own listener hands nothing over.
 */
import { AppError } from '../../core/errors.js';
import type { MonitorConfig, MonitorType } from '../monitor-types/types.js';

/** The secret fields an update would carry over from the stored record: set there and absent from the request, and
 * the fields with embedded credentials (URL userinfo, header values) the request leaves out or sends as `***` (`kept`). */
export function carriedSecrets(
  type: MonitorType,
  stored: Readonly<MonitorConfig>,
  request: Record<string, string | undefined>,
  kept: readonly string[] = [],
): string[] {
  const out = type.secretFields.filter((k) => (stored[k] ?? '') !== '' && request[k] === undefined);
  for (const [k, embedded] of Object.entries(type.embeddedSecrets ?? {}))
    if (embedded.has(stored[k] ?? '') && (request[k] === undefined || kept.includes(k))) out.push(k);
  return out;
}

/** Throws 400 naming the fields when `next` moves away from the target of `stored` while carrying stored secrets. */
export function assertSecretsStayBound(
  type: MonitorType,
  stored: Readonly<MonitorConfig>,
  next: Readonly<MonitorConfig>,
  request: Record<string, string | undefined>,
  kept: readonly string[] = [],
): void {
  if (!type.secretTarget) return;
  const carried = carriedSecrets(type, stored, request, kept);
  if (carried.length === 0) return;
  const before = type.secretTarget(stored);
  const after = type.secretTarget(next);
  const moved = Object.keys(after).filter((k) => before[k] !== after[k]);
  if (moved.length === 0) return;
  throw AppError.badRequest(
    `changing ${moved.join(', ')} points the monitor at another target; stored secrets stay with the target they ` +
      `were entered for: supply ${carried.join(', ')} again in the same request (or send them empty to clear them)`,
    `body.${carried[0]}`,
  );
}
