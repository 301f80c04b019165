/**
 * Response-body facts shared by the api type (and the snmp/db types): body format detection and parsing (JSON, XML),
 * value extraction from a regex match, numeric extraction and the `patternComp` comparison.
 */
import type { CheckResult, MonitorConfig } from '../types.js';
import type { RegexMatch } from './safe-regex.js';

export const PATTERN_COMPS = ['number >', 'number <', 'number ==', 'string ==', 'string contains'] as const;
export type PatternComp = (typeof PATTERN_COMPS)[number];

export function isPatternComp(v: string): v is PatternComp {
  return (PATTERN_COMPS as readonly string[]).includes(v);
}

export type BodyFormat = 'json' | 'xml' | 'text';

export interface ParsedBody {
  format: BodyFormat;
  /** Parsed JSON value (format json, when it parsed). */
  json?: unknown;
  /** Why a declared JSON/XML body did not parse. */
  error?: string;
}

/** The format a Content-Type declares: application/json, *+json → json; application/xml, text/xml, *+xml → xml. */
export function declaredFormat(contentType: string | undefined): BodyFormat {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mime === 'application/json' || mime.endsWith('+json')) return 'json';
  if (mime === 'application/xml' || mime === 'text/xml' || mime.endsWith('+xml')) return 'xml';
  return 'text';
}

/** Parses the body as its Content-Type declares. A truncated body is not parsed (it cannot be complete). */
export function parseBody(contentType: string | undefined, text: string, truncated = false): ParsedBody {
  const format = declaredFormat(contentType);
  if (format === 'text' || truncated) return { format };
  if (format === 'json') {
    try {
      return { format, json: JSON.parse(text) as unknown };
    } catch (e) {
      return { format, error: `invalid JSON body: ${(e as Error).message}` };
    }
  }
  const error = checkXml(text);
  return error === undefined ? { format } : { format, error: `invalid XML body: ${error}` };
}

const XML_SKIP: [string, string][] = [
  ['<?', '?>'],
  ['<!--', '-->'],
  ['<![CDATA[', ']]>'],
  ['<!', '>'],
];

/** Dependency-free well-formedness check of XML element nesting; returns the problem or undefined. */
export function checkXml(text: string): string | undefined {
  const stack: string[] = [];
  let roots = 0;
  let i = text.indexOf('<');
  while (i !== -1) {
    const skip = XML_SKIP.find(([open]) => text.startsWith(open, i));
    if (skip) {
      const end = text.indexOf(skip[1], i + skip[0].length);
      if (end === -1) return `unterminated '${skip[0]}' at ${i}`;
      i = text.indexOf('<', end + skip[1].length);
      continue;
    }
    const end = text.indexOf('>', i);
    if (end === -1) return `unterminated tag at ${i}`;
    const tag = text.slice(i + 1, end);
    const m = /^(\/)?([A-Za-z_][\w.:-]*)[^]*?(\/)?$/.exec(tag);
    if (!m) return `malformed tag at ${i}`;
    const [, closing, name, selfClosing] = m;
    if (closing) {
      const open = stack.pop();
      if (open !== name) return `</${name}> does not close <${open ?? ''}> at ${i}`;
    } else if (!selfClosing) {
      if (stack.length === 0) roots += 1;
      stack.push(name!);
    } else if (stack.length === 0) roots += 1;
    i = text.indexOf('<', end + 1);
  }
  if (stack.length > 0) return `unclosed <${stack[stack.length - 1]}>`;
  if (roots !== 1) return roots === 0 ? 'no root element' : 'more than one root element';
  return undefined;
}

/**
 * The value a pattern match yields: the named group `matchGroupName` when given; else group `matchIndex` when given;
 * else group 1 when the pattern has groups, the whole match when it has none.
 */
export function extractValue(
  match: RegexMatch,
  opts: { matchGroupName?: string; matchIndex?: string },
): { value?: string; error?: string } {
  if (opts.matchGroupName) {
    const v = match.named[opts.matchGroupName];
    return v === undefined ? { error: `group '${opts.matchGroupName}' did not match` } : { value: v };
  }
  if (opts.matchIndex !== undefined && opts.matchIndex !== '') {
    const idx = Number(opts.matchIndex);
    if (idx >= match.groups.length)
      return { error: `matchIndex ${idx} is beyond the pattern's ${match.groups.length - 1} group(s)` };
    const v = match.groups[idx];
    return v === undefined ? { error: `group ${idx} did not match` } : { value: v };
  }
  const v = match.groups.length > 1 ? match.groups[1] : match.groups[0];
  return v === undefined ? { error: 'group 1 did not match' } : { value: v };
}

/** The number in a value: the whole trimmed value when it is one, else its first numeric token ("42 ms" → 42). */
export function toNumber(value: string): number | undefined {
  const t = value.trim();
  if (t !== '' && Number.isFinite(Number(t))) return Number(t);
  const m = /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/.exec(t);
  if (!m) return undefined;
  const n = Number(m[0]);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Whether `value <patternComp> patternCompValCri` holds (the CRITICAL condition). Number comparisons use
 * toNumber on both sides; a side that is not a number yields `error` (and matched false).
 */
export function compareValue(
  value: string,
  patternComp: string,
  patternCompValCri: string,
): { matched: boolean; error?: string } {
  if (!isPatternComp(patternComp)) return { matched: false, error: `unknown patternComp '${patternComp}'` };
  if (patternComp === 'string ==') return { matched: value === patternCompValCri };
  if (patternComp === 'string contains') return { matched: value.includes(patternCompValCri) };
  const left = toNumber(value);
  if (left === undefined) return { matched: false, error: `extracted value '${value.slice(0, 100)}' is not a number` };
  const right = toNumber(patternCompValCri);
  if (right === undefined) return { matched: false, error: `patternCompValCri '${patternCompValCri}' is not a number` };
  if (patternComp === 'number >') return { matched: left > right };
  if (patternComp === 'number <') return { matched: left < right };
  return { matched: left === right };
}

/**
 * Applies a monitor's patternComp/patternCompValCri to a value its check read (snmp value, db first value): when the
 * comparison holds the result becomes CRITICAL; when it can't be made (a non-number for a number comparison) the
 * result is an error. Without patternComp the result is returned as it is.
 */
export function withPatternComp(result: CheckResult, value: string, config: MonitorConfig): CheckResult {
  const pc = config.patternComp?.trim();
  if (!pc) return result;
  const cmp = compareValue(value, pc, config.patternCompValCri ?? '');
  if (cmp.error) return { ...result, outcome: 'error', message: cmp.error };
  if (!cmp.matched) return result;
  return { ...result, severity: 'CRITICAL', message: `${result.message} (${pc} ${config.patternCompValCri} holds)` };
}
