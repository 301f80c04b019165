// Client-side validation mirroring the server's (src/monitor/monitors/common-fields.ts and the types' checks), so
// most mistakes are shown on the field before a round trip. The server stays the authority: its 400 {field} is
// shown on the same field. Choices of fields whose schema has an enum (the channels' notify<Channel> opt-outs, …)
// are added from the OpenAPI document by views/form.js.
// @ts-check
/** @type {Record<string, string[]>}  field → its values (views/form.js adds the schema's enums) */
export const CHOICES = {
  sched: ['1MIN', '5MIN', '10MIN', '20MIN', '30MIN', '60MIN', 'CRON'],
  state: ['on', 'off'],
  notifyStatus: ['on', 'off'],
  emailOnF: ['true', 'false'],
  ignoreTlsErrors: ['true', 'false'],
  video: ['true', 'false'],
  har: ['true', 'false'],
  typeApi: ['GET', 'POST', 'PUT', 'DELETE'],
  threshOn: ['value', 'responseTime'],
  recordType: ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SOA'],
  version: ['v1', 'v2c', 'v3'],
  v3SecurityLevel: ['noAuthNoPriv', 'authNoPriv', 'authPriv'],
  v3AuthProtocol: ['MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512'],
  v3PrivProtocol: ['DES', 'AES', 'AES192', 'AES256'],
  dbType: ['mysql', 'postgres', 'mssql'],
  patternComp: ['number >', 'number <', 'number ==', 'string ==', 'string contains'],
  browser: ['chromium', 'firefox'],
  artifacts: ['always', 'on-failure', 'never'],
};
export const TEXTAREAS = new Set(['steps', 'body', 'query', 'headers']);

const NAME_RE = /^[A-Za-z0-9_.:@-]{1,128}$/;
const EMAIL_RE = /^[^\s@,]+@[^\s@,]+$/;
const TAGS_RE = /^\[([^[\],]{1,64}(,[^[\],]{1,64})*)?\]$/;
/** @type {Record<string, [min: number, max: number, integer: boolean]>} */
const NUMBERS = {
  timeout: [1, 300, false],
  retries: [0, 10, true],
  notifyAfter: [1, 1000, true],
  renotifyMinutes: [0, 525_600, true],
  threshMin: [0, 1e12, false],
  threshMaj: [0, 1e12, false],
  threshCri: [0, 1e12, false],
  port: [1, 65535, true],
  dbPort: [1, 65535, true],
  matchIndex: [0, 99, true],
};

/**
 * @param {string} v
 * @param {[min: number, max: number, integer: boolean]} range
 */
function num(v, [min, max, int]) {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max || (int && !Number.isInteger(n)))
    return `must be ${int ? 'an integer' : 'a number'} from ${min} to ${max}`;
  return undefined;
}

/**
 * values: field → string ('' = empty). meta: { type, required: Set, schema: properties, editing }.
 * Returns field → message for every problem found.
 * @param {Record<string, string | undefined>} values
 * @param {{ required: Set<string>, schema: Record<string, { maxLength?: number, pattern?: string }>, editing?: boolean,
 *   secretSet?: Set<string> }} meta
 * @returns {Record<string, string>}
 */
export function validateMonitor(values, meta) {
  /** @type {Record<string, string>} */
  const err = {};
  const v = (/** @type {string} */ k) => (values[k] ?? '').trim();
  for (const k of meta.required) if (!v(k) && !(meta.editing && meta.secretSet?.has(k))) err[k] = `${k} is required`;
  if (v('name') && !NAME_RE.test(v('name'))) err.name = 'name must be 1-128 of A-Z a-z 0-9 _ . - : @';
  for (const [k, s] of Object.entries(meta.schema)) {
    const val = values[k] ?? '';
    if (!val || err[k]) continue;
    if (s.maxLength && val.length > s.maxLength) err[k] = `at most ${s.maxLength} characters`;
    else if (s.pattern && !new RegExp(s.pattern).test(val)) err[k] = `must match ${s.pattern}`;
    else if (CHOICES[k] && !CHOICES[k].includes(val)) err[k] = `must be one of ${CHOICES[k].join(', ')}`;
    else if (NUMBERS[k]) {
      const m = num(val, NUMBERS[k]);
      if (m) err[k] = `${k} ${m}`;
    }
  }
  if (v('sched') === 'CRON' && !v('schedCron')) err.schedCron = 'schedCron is required when sched is CRON';
  if (v('schedCron') && v('schedCron').split(/\s+/).length !== 5) err.schedCron ??= 'a 5-field cron expression';
  for (const f of ['probe', 'location']) if (v(f).length > 100) err[f] = `${f} must be at most 100 characters`;
  if (v('tags') && !TAGS_RE.test(v('tags'))) err.tags = 'tags must look like [tag1,tag2]';
  const t = ['threshMin', 'threshMaj', 'threshCri'].map((k) => (v(k) && !err[k] ? Number(v(k)) : undefined));
  if (t[0] !== undefined && t[1] !== undefined && t[0] > t[1]) err.threshMin = 'threshMin must not exceed threshMaj';
  if (t[1] !== undefined && t[2] !== undefined && t[1] > t[2]) err.threshMaj = 'threshMaj must not exceed threshCri';
  if (t[0] !== undefined && t[2] !== undefined && t[0] > t[2]) err.threshMin ??= 'threshMin must not exceed threshCri';
  if (v('emailR'))
    for (const r of v('emailR')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean))
      if (!EMAIL_RE.test(r)) err.emailR = `${r} is not an email address`;
  for (const k of ['url', 'api'])
    if (v(k) && !/^https?:\/\/[^\s]+$/i.test(v(k))) err[k] = `${k} must be an http:// or https:// URL`;
  for (const k of ['pattern']) {
    if (!v(k)) continue;
    try {
      new RegExp(v(k));
    } catch {
      err[k] = 'not a valid regular expression';
    }
  }
  if (v('steps')) {
    try {
      /** @type {unknown} */
      const s = JSON.parse(v('steps'));
      if (!Array.isArray(s) || !s.length) err.steps = 'steps must be a non-empty JSON array';
    } catch {
      err.steps = 'steps must be valid JSON (an array of steps)';
    }
  }
  if (v('snmpOid') && !/^\.?\d+(\.\d+)+$/.test(v('snmpOid')))
    err.snmpOid = 'a dotted numeric OID, e.g. 1.3.6.1.2.1.1.3.0';
  return err;
}

/**
 * "body.port" → "port".
 * @param {string | undefined} serverField
 */
export function fieldOf(serverField) {
  return serverField ? String(serverField).replace(/^(body|params|querystring)\./, '') : undefined;
}
