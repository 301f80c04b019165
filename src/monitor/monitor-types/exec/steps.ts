/**
 * The transaction language of exec monitors: a JSON array of named steps. `parseSteps` accepts the stored string
 * (the API's string value) or an already-parsed array, and throws AppError.badRequest(..., 'steps') naming the step
 * index and name for anything it cannot run.
 */
import { AppError } from '../../../core/errors.js';
import { findTemplates, TEMPLATE_KINDS } from './templates.js';
import { checkUserRegex } from '../lib/safe-regex.js';

export const ACTIONS = [
  'goto',
  'click',
  'fill',
  'select',
  'press',
  'check',
  'hover',
  'waitFor',
  'assertText',
  'assertVisible',
  'assertUrl',
  'extract',
  'screenshot',
  'sleep',
  'totp',
] as const;
export type Action = (typeof ACTIONS)[number];

export const MAX_STEPS = 100;
export const MAX_SLEEP_MS = 30_000;
export const MAX_STEP_TIMEOUT_MS = 300_000;
export const WAIT_STATES = ['visible', 'hidden', 'attached', 'detached'] as const;
export type WaitState = (typeof WAIT_STATES)[number];

export interface Step {
  /** Display name; defaults to "<index+1>. <action>". */
  name: string;
  action: Action;
  url?: string;
  selector?: string;
  /** fill/select value; the only field where {{vault:}}, {{secret:}} and {{totp:}} references are resolved. */
  value?: string;
  key?: string;
  checked?: boolean;
  text?: string;
  /** Regular expression source (assertText, assertUrl, waitFor url); RE2 semantics, see lib/safe-regex.ts. */
  pattern?: string;
  state?: WaitState;
  networkIdle?: boolean;
  /** extract: the name the value is reported under in details.extracted. */
  as?: string;
  attribute?: string;
  fullPage?: boolean;
  /** totp: the secret-store name of the TOTP seed. */
  secret?: string;
  ms?: number;
  timeoutMs?: number;
}

const NEEDS_SELECTOR: readonly Action[] = [
  'click',
  'fill',
  'select',
  'check',
  'hover',
  'assertVisible',
  'extract',
  'totp',
];
const STRING_FIELDS = [
  'name',
  'url',
  'selector',
  'value',
  'key',
  'text',
  'pattern',
  'state',
  'as',
  'attribute',
  'secret',
];
const KNOWN_FIELDS = new Set([...STRING_FIELDS, 'action', 'checked', 'networkIdle', 'fullPage', 'ms', 'timeoutMs']);

/** Only http(s) may be opened: no file:, data:, javascript:, chrome:, view-source:, about:. */
export function checkHttpUrl(raw: string): string | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `"${raw}" is not an absolute URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `scheme "${u.protocol}" is not allowed (only http, https)`;
  return undefined;
}

function fail(index: number, name: string | undefined, msg: string): never {
  const label = name ? `steps[${index}] ("${name}")` : `steps[${index}]`;
  throw AppError.badRequest(`${label}: ${msg}`, 'steps');
}

/** Step patterns run on RE2 semantics (lib/safe-regex.ts): what it cannot run in linear time is refused here. */
function checkRegex(index: number, name: string, src: string): void {
  const r = checkUserRegex(src);
  if (!r.ok) fail(index, name, `pattern "${src.slice(0, 200)}" is not a usable regular expression: ${r.message}`);
}

function checkTemplates(index: number, s: Step, raw: Record<string, unknown>): void {
  for (const f of STRING_FIELDS) {
    const v = raw[f];
    if (typeof v !== 'string') continue;
    const refs = findTemplates(v);
    if (refs.length === 0) continue;
    if (f !== 'value') fail(index, s.name, `{{...}} references are only allowed in "value" (found in "${f}")`);
    for (const r of refs) {
      if (!r.valid)
        fail(index, s.name, `bad reference "${r.raw}" (use ${TEMPLATE_KINDS.map((k) => `{{${k}:...}}`).join(', ')})`);
    }
  }
}

function checkNumber(index: number, name: string, v: unknown, field: string, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > max) {
    fail(index, name, `"${field}" must be an integer between 0 and ${max}`);
  }
  return n;
}

function checkActionFields(index: number, s: Step): void {
  const n = s.name;
  if (NEEDS_SELECTOR.includes(s.action) && !s.selector) fail(index, n, `action "${s.action}" needs a "selector"`);
  switch (s.action) {
    case 'goto': {
      if (!s.url) fail(index, n, 'action "goto" needs a "url"');
      const bad = checkHttpUrl(s.url);
      if (bad) fail(index, n, bad);
      break;
    }
    case 'fill':
    case 'select':
      if (s.value === undefined) fail(index, n, `action "${s.action}" needs a "value"`);
      break;
    case 'press':
      if (!s.key) fail(index, n, 'action "press" needs a "key" (e.g. "Enter")');
      break;
    case 'totp':
      if (!s.secret) fail(index, n, 'action "totp" needs a "secret" (the name of the stored TOTP seed)');
      break;
    case 'waitFor': {
      const modes = [s.selector, s.text, s.url ?? s.pattern, s.networkIdle ? 'x' : undefined].filter((x) => x);
      if (modes.length !== 1)
        fail(index, n, 'action "waitFor" needs exactly one of "selector", "text", "url"/"pattern", "networkIdle"');
      if (s.state && !WAIT_STATES.includes(s.state)) fail(index, n, `"state" must be one of ${WAIT_STATES.join(', ')}`);
      break;
    }
    case 'assertText':
      if (s.text === undefined && s.pattern === undefined)
        fail(index, n, 'action "assertText" needs "text" or "pattern"');
      break;
    case 'assertUrl':
      if (s.url === undefined && s.pattern === undefined)
        fail(index, n, 'action "assertUrl" needs "url" (substring) or "pattern"');
      break;
    case 'extract':
      if (!s.as) fail(index, n, 'action "extract" needs "as" (the name of the extracted value)');
      break;
    case 'sleep':
      if (s.ms === undefined) fail(index, n, `action "sleep" needs "ms" (at most ${MAX_SLEEP_MS})`);
      break;
    default:
      break;
  }
  if (s.pattern !== undefined) checkRegex(index, n, s.pattern);
}

function parseStep(raw: unknown, index: number): Step {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail(index, undefined, 'must be an object');
  const r = raw as Record<string, unknown>;
  const given = typeof r.name === 'string' ? r.name : undefined;
  for (const k of Object.keys(r)) if (!KNOWN_FIELDS.has(k)) fail(index, given, `unknown field "${k}"`);
  for (const f of STRING_FIELDS) {
    if (r[f] !== undefined && typeof r[f] !== 'string') fail(index, given, `"${f}" must be a string`);
  }
  for (const f of ['checked', 'networkIdle', 'fullPage']) {
    if (r[f] !== undefined && typeof r[f] !== 'boolean') fail(index, given, `"${f}" must be a boolean`);
  }
  const action = r.action;
  if (typeof action !== 'string') fail(index, given, 'missing "action"');
  if (!(ACTIONS as readonly string[]).includes(action)) {
    fail(index, given, `unknown action "${action}" (one of ${ACTIONS.join(', ')})`);
  }
  const name = given ?? `${index + 1}. ${action}`;
  const step = { ...(r as object), name, action } as Step;
  step.ms = checkNumber(index, name, r.ms, 'ms', MAX_SLEEP_MS);
  step.timeoutMs = checkNumber(index, name, r.timeoutMs, 'timeoutMs', MAX_STEP_TIMEOUT_MS);
  checkTemplates(index, step, r);
  checkActionFields(index, step);
  return step;
}

/** Parses and validates the `steps` field (a JSON string of an array, or the array itself). */
export function parseSteps(input: unknown): Step[] {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw AppError.badRequest('steps: not valid JSON (expected an array of step objects)', 'steps');
    }
  }
  if (!Array.isArray(value)) throw AppError.badRequest('steps: expected an array of step objects', 'steps');
  if (value.length === 0) throw AppError.badRequest('steps: at least one step is required', 'steps');
  if (value.length > MAX_STEPS) throw AppError.badRequest(`steps: at most ${MAX_STEPS} steps`, 'steps');
  const steps = value.map((raw, i) => parseStep(raw, i));
  const first = steps[0];
  if (first && first.action !== 'goto')
    throw AppError.badRequest(`steps[0] ("${first.name}"): the first step must be "goto"`, 'steps');
  return steps;
}
