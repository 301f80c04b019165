/**
 * The fields every monitor has (spec §2 "Monitor: fields common to create requests"), their schema and validation.
 * Required: name for every type, plus the type's `requiredCommon` (url, per the spec: display_name, sched, state,
 * probe).
 * Defaults are one set for every type (COMMON_DEFAULTS; exec alone has a longer timeout), applied at create/update
 * and stored, so a monitor's view shows what runs; docs/monitors.md lists them. emailOnF implies notify: a request
 * that sets emailOnF "true" without notifyStatus turns notifyStatus on.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { channelMonitorFields, checkChannelMonitorFields } from '../../core/notify/monitor-fields.js';
import { isEmailAddress } from '../../core/notify/mailbox.js';
import { parseSchedule, isSchedulePreset, SCHEDULE_PRESETS } from '../scheduler/schedule.js';
import { Choice, MAX } from '../../core/http/schemas.js';

/** The defaults of the common fields, the same for every type (display_name defaults to the name). Stored. */
export const COMMON_DEFAULTS: Readonly<Record<string, string>> = {
  sched: '5MIN',
  state: 'on',
  probe: 'default',
  timeout: '10',
  retries: '0',
  notifyStatus: 'off',
  notifyAfter: '1',
};

/** Defaults of the optional switches, applied when read (not stored): shown in the OpenAPI only. */
const READ_DEFAULTS: Readonly<Record<string, string>> = {
  emailOnF: 'false',
  renotifyMinutes: '0',
};

const dfltOf = (key?: string) => {
  const dflt = key === undefined ? undefined : (COMMON_DEFAULTS[key] ?? READ_DEFAULTS[key]);
  return dflt === undefined ? {} : { default: dflt };
};
const S = (description: string, key?: string, maxLength: number = MAX.text) =>
  Type.String({ description, maxLength, ...dfltOf(key) });
/** A closed set ('' = the default). */
const C = (values: readonly string[], description: string, key?: string, anyCase = false) =>
  Choice(values, { optional: true, anyCase, description: `${description} ('' = the default)`, ...dfltOf(key) });

/** What the `{sched}` path segment accepts, for the OpenAPI description of every such parameter. */
export const SCHED_PARAM_DESCRIPTION =
  "the monitor's sched as stored (1MIN…60MIN, or CRON for a monitor created with schedCron only; any case); a monitor " +
  'with a schedCron is also found under CRON';

export const COMMON_FIELDS: Record<string, TSchema> = {
  name: Type.String({
    description: 'unique monitor identifier across all types: 1-128 of A-Z a-z 0-9 _ . - : @',
    maxLength: 128,
    example: 'web-1',
  }),
  display_name: S('human-readable name (default: the name; required for url)'),
  sched: C(
    [...Object.keys(SCHEDULE_PRESETS), 'CRON'],
    'schedule identifier (required for url); CRON needs schedCron. Without sched, a monitor with schedCron gets ' +
      'sched CRON, one without gets 5MIN; any case',
    'sched',
    true,
  ),
  schedCron: S(
    '5-field cron expression read in the timezone setting (default UTC); overrides sched. Runs at its time + a ' +
      'stable jitter under 5 s per monitor',
  ),
  state: C(['on', 'off'], 'on or off (required for url)', 'state'),
  probe: S('probe (component) name, free text up to 100 characters (required for url)', 'probe', 100),
  location: S('location label, free text up to 100 characters', undefined, 100),
  tags: S('comma-separated tags inside square brackets: [tag1,tag2]'),
  timeout: S('seconds, 1-300, bounds the whole check (exec: default 60)', 'timeout'),
  retries: S('re-attempts before a failure counts, 0-10', 'retries'),
  threshCri: S(
    'critical threshold; reached when value >= threshCri (response time ms; sys: utilisation %; api: see threshOn)',
  ),
  threshMaj: S('major threshold, same unit'),
  threshMin: S('minor threshold, same unit'),
  notifyStatus: C(
    ['on', 'off'],
    'on or off: send alerts for this monitor (off mutes every channel, email included). A request that sets ' +
      'emailOnF "true" without notifyStatus turns it on',
    'notifyStatus',
  ),
  notifyAfter: S('consecutive non-OK runs before an alert', 'notifyAfter'),
  emailOnF: C(
    ['true', 'false'],
    'true or false: email emailR on failure (implies notifyStatus on, see there)',
    'emailOnF',
  ),
  emailR: S('comma-separated email addresses (local@domain)', undefined, MAX.list),
  renotifyMinutes: S('repeat an alert while a problem holds, every N minutes; 0 = never', 'renotifyMinutes'),
  parents: S(
    'monitors this one depends on: [name,…] and tag:<tag> entries (every monitor with the tag). While one of them ' +
      '(or their parents) is DOWN, ERROR or EXCEPTION, the problem alerts of this monitor are suppressed and its ' +
      'result says which parent; recoveries are never suppressed. A cycle is refused (400)',
  ),
  agent: S(
    'name of a registered discovery agent (GET /agents) to ask what listens on the target port when a run fails; ' +
      'empty: the agent registered for the target host, if any (docs/alerting.md "Enrichment")',
    undefined,
    64,
  ),
  managedBy: S(
    'set by `sentinel apply`: the monitors file that manages this monitor (its name); the dashboard warns that an ' +
      'edit made there is overwritten by the next apply of that file. Empty: not managed by a file',
  ),
  // notifyChannels (routing) and each notification channel's own fields (notifySlack, ...): from the channel registry.
  ...channelMonitorFields(),
};

const NAME_RE = /^[A-Za-z0-9_.:@-]{1,128}$/;
const TAGS_RE = /^\[([^[\],]{1,64}(,[^[\],]{1,64})*)?\]$/;

function bad(field: string, message: string): never {
  throw AppError.badRequest(message, `body.${field}`);
}

function checkNumber(
  c: Record<string, string | undefined>,
  field: string,
  min: number,
  max: number,
  integer: boolean,
): number | undefined {
  const raw = c[field];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    bad(field, `${field} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  }
  return n;
}

function checkEnum(c: Record<string, string | undefined>, field: string, values: string[]): void {
  const v = c[field];
  if (v !== undefined && v !== '' && !values.includes(v)) bad(field, `${field} must be one of ${values.join(', ')}`);
}

export function parseTags(tags: string | undefined): string[] {
  if (!tags) return [];
  const inner = tags.trim().replace(/^\[/, '').replace(/\]$/, '');
  return inner
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/**
 * The rule of a create/update request itself (not of the merged config): emailOnF "true" without notifyStatus in
 * the same request turns notifyStatus on, so a user who asks for mail gets it.
 */
export function applyRequestRules(
  request: Record<string, string | undefined>,
  c: Record<string, string | undefined>,
): void {
  if (request.emailOnF?.trim() === 'true' && (request.notifyStatus === undefined || request.notifyStatus === ''))
    c.notifyStatus = 'on';
}

/** Why a valid config will send no alert (returned with create/update so the user learns it at once). */
export function alertWarnings(c: Record<string, string | undefined>): string[] {
  const out: string[] = [];
  if (c.emailOnF === 'true' && c.notifyStatus !== 'on')
    out.push('notifyStatus is off: this monitor sends no alert, email included (set notifyStatus on)');
  if (c.emailOnF === 'true' && !c.emailR?.trim())
    out.push('emailOnF is true but emailR is empty: no email can be sent');
  return out;
}

/** True when the `{sched}` path segment names this monitor's schedule (see SCHED_PARAM_DESCRIPTION). */
export function schedMatches(given: string, c: Record<string, string | undefined>): boolean {
  const g = given.trim().toUpperCase();
  if (g !== '' && g === (c.sched ?? '').toUpperCase()) return true;
  return g === 'CRON' && !!c.schedCron?.trim();
}

/** Fills defaults and validates the common fields of a full monitor config (`type.requiredCommon`: the common fields
 * its type requires besides the name). Throws 400 naming the field. */
export function normaliseCommon(
  c: Record<string, string | undefined>,
  type: { id: string; requiredCommon?: readonly string[] },
): void {
  if (!c.name) bad('name', 'name is required');
  if (!NAME_RE.test(c.name)) bad('name', 'name must be 1-128 of A-Z a-z 0-9 _ . - : @');
  for (const f of type.requiredCommon ?? []) if (!c[f]) bad(f, `${f} is required for ${type.id} monitors`);
  c.display_name ||= c.name;
  if (c.sched) c.sched = c.sched.trim().toUpperCase();
  if (!c.sched) c.sched = c.schedCron ? 'CRON' : COMMON_DEFAULTS.sched;
  for (const [k, v] of Object.entries(COMMON_DEFAULTS)) if (!c[k]) c[k] = v;
  checkEnum(c, 'state', ['on', 'off']);
  if (c.sched === 'CRON' && !c.schedCron) bad('schedCron', 'schedCron is required when sched is CRON');
  if (c.sched !== 'CRON' && !isSchedulePreset(c.sched!))
    bad('sched', 'sched must be 1MIN, 5MIN, 10MIN, 20MIN, 30MIN, 60MIN or CRON');
  try {
    parseSchedule(c.sched!, c.schedCron || undefined);
  } catch (e) {
    if (e instanceof AppError) bad(e.field?.replace(/^body\./, '') ?? 'schedCron', e.message);
    throw e;
  }
  for (const f of ['probe', 'location'] as const)
    if ((c[f]?.length ?? 0) > 100) bad(f, `${f} must be at most 100 characters`);
  if (c.tags && !TAGS_RE.test(c.tags.trim())) bad('tags', 'tags must look like [tag1,tag2]');
  if (c.agent && !/^[A-Za-z0-9_.-]{1,64}$/.test(c.agent.trim()))
    bad('agent', 'agent must be an agent name (1-64 of A-Z a-z 0-9 _ . -)');
  checkNumber(c, 'timeout', 1, 300, false);
  checkNumber(c, 'retries', 0, 10, true);
  const min = checkNumber(c, 'threshMin', 0, 1e12, false);
  const maj = checkNumber(c, 'threshMaj', 0, 1e12, false);
  const cri = checkNumber(c, 'threshCri', 0, 1e12, false);
  if (min !== undefined && maj !== undefined && min > maj) bad('threshMin', 'threshMin must not exceed threshMaj');
  if (maj !== undefined && cri !== undefined && maj > cri) bad('threshMaj', 'threshMaj must not exceed threshCri');
  if (min !== undefined && cri !== undefined && min > cri) bad('threshMin', 'threshMin must not exceed threshCri');
  checkEnum(c, 'notifyStatus', ['on', 'off']);
  checkNumber(c, 'notifyAfter', 1, 1000, true);
  checkNumber(c, 'renotifyMinutes', 0, 525_600, true);
  checkEnum(c, 'emailOnF', ['true', 'false']);
  const channelProblem = checkChannelMonitorFields(c);
  if (channelProblem) bad(channelProblem.field, channelProblem.message);
  if (c.emailR) {
    for (const r of c.emailR
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean))
      if (!isEmailAddress(r)) bad('emailR', `${r.slice(0, 80)} is not an email address (local@domain)`);
  }
}
