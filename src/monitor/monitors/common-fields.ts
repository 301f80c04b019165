/**
 * The fields every monitor has (spec §2 "Monitor: fields common to create requests"), their schema and validation.
 * Required: name for every type; for url monitors the spec also requires display_name, sched, state and probe.
 * Other types get defaults (display_name = name, sched 5MIN, state on, probe "default"), documented in docs/monitors.md.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { channelMonitorFields, checkChannelMonitorFields } from '../../core/notify/monitor-fields.js';
import { parseSchedule, isSchedulePreset } from '../scheduler/schedule.js';

const S = (description: string) => Type.String({ description, maxLength: 2048 });

export const COMMON_FIELDS: Record<string, TSchema> = {
  name: Type.String({
    description: 'unique monitor identifier across all types: 1-128 of A-Z a-z 0-9 _ . - : @',
    maxLength: 128,
  }),
  display_name: S('human-readable name'),
  sched: S('schedule identifier: 1MIN, 5MIN, 10MIN, 20MIN, 30MIN, 60MIN (or CRON with schedCron)'),
  schedCron: S('5-field cron expression (UTC); overrides sched'),
  state: S('on or off'),
  probe: S('probe (component) name, free text up to 100 characters; default "default"'),
  location: S('location label, free text up to 100 characters'),
  tags: S('comma-separated tags inside square brackets: [tag1,tag2]'),
  timeout: S('seconds, 1-300, bounds the whole check (default 10; exec 60)'),
  retries: S('re-attempts before a failure counts, 0-10 (default 0)'),
  threshCri: S('critical threshold (response time ms; sys: utilisation %)'),
  threshMaj: S('major threshold, same unit'),
  threshMin: S('minor threshold, same unit'),
  notifyStatus: S('on or off: send alerts for this monitor'),
  notifyAfter: S('consecutive non-OK runs before an alert (default 1)'),
  emailOnF: S('true or false: email emailR on failure'),
  emailR: S('comma-separated email recipients'),
  renotifyMinutes: S('repeat an alert while a problem holds, every N minutes; 0 = never (default)'),
  // notifyChannels (routing) and each notification channel's own fields (notifySlack, ...): from the channel registry.
  ...channelMonitorFields(),
};

export const URL_REQUIRED_COMMON = ['name', 'display_name', 'sched', 'state', 'probe'] as const;

const NAME_RE = /^[A-Za-z0-9_.:@-]{1,128}$/;
const EMAIL_RE = /^[^\s@,]+@[^\s@,]+$/;
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

/** Fills defaults and validates the common fields of a full monitor config. Throws 400 naming the field. */
export function normaliseCommon(c: Record<string, string | undefined>, type: string): void {
  if (!c.name) bad('name', 'name is required');
  if (!NAME_RE.test(c.name)) bad('name', 'name must be 1-128 of A-Z a-z 0-9 _ . - : @');
  if (type === 'url') for (const f of URL_REQUIRED_COMMON) if (!c[f]) bad(f, `${f} is required for url monitors`);
  c.display_name ||= c.name;
  if (!c.sched) c.sched = c.schedCron ? 'CRON' : '5MIN';
  c.state ||= 'on';
  c.probe ||= 'default';
  checkEnum(c, 'state', ['on', 'off']);
  if (c.sched === 'CRON' && !c.schedCron) bad('schedCron', 'schedCron is required when sched is CRON');
  if (c.sched !== 'CRON' && !isSchedulePreset(c.sched))
    bad('sched', 'sched must be 1MIN, 5MIN, 10MIN, 20MIN, 30MIN, 60MIN or CRON');
  try {
    parseSchedule(c.sched, c.schedCron || undefined);
  } catch (e) {
    if (e instanceof AppError) bad(e.field?.replace(/^body\./, '') ?? 'schedCron', e.message);
    throw e;
  }
  for (const f of ['probe', 'location'] as const)
    if ((c[f]?.length ?? 0) > 100) bad(f, `${f} must be at most 100 characters`);
  if (c.tags && !TAGS_RE.test(c.tags.trim())) bad('tags', 'tags must look like [tag1,tag2]');
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
      if (!EMAIL_RE.test(r)) bad('emailR', `${r} is not an email address`);
  }
}
