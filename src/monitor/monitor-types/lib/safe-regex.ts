/**
 * The one place user regexes (api/url `pattern`, exec step `pattern`) are checked, translated and run. They run on
 * RE2 semantics (re2js, a pure-JS port of RE2: time linear in the input, no backtracking) in a worker thread with a
 * hard time bound (lib/regex-pool.ts), never on the service's event loop; the text a pattern sees is capped.
 *
 * Syntax: JavaScript regex syntax is accepted where RE2 can run it in linear time, with JavaScript's meaning kept for
 * `.` (not \n, \r, \u2028, \u2029) and `\s`/`\S` (Unicode spaces). RE2 extensions are accepted too: inline flags
 * `(?i)` `(?s)` `(?m)`, `(?P<name>…)`. Backreferences, lookahead and lookbehind cannot run in linear time: they are
 * refused at create/update with a message naming the field and saying what to write instead. docs/checks-http.md.
 */
import { RE2JS } from 're2js';
import { AppError } from '../../../core/errors.js';
import { createRegexPool, type RegexPoolOptions } from './regex-pool.js';

/** Longest pattern accepted (characters). */
export const MAX_PATTERN_CHARS = 4096;
/** A pattern runs against at most this many characters (or UTF-8 bytes, for a body) of its text: the first ones. */
export const MAX_REGEX_INPUT_CHARS = 1 << 20;
/** Hard bound of one match in the worker; past it the worker is stopped and the run ends EXCEPTION. */
export const DEFAULT_REGEX_TIMEOUT_MS = 1_000;

export interface RegexMatch {
  /** The whole match. */
  match: string;
  /** Numbered groups, index 0 = whole match (undefined for groups that did not take part). */
  groups: (string | undefined)[];
  /** Named groups (empty object when the pattern has none). */
  named: Record<string, string | undefined>;
  index: number;
}

export type RegexRun = { ok: true; match: RegexMatch | null } | { ok: false; error: string };
export type RegexTest = { ok: true; found: boolean } | { ok: false; error: string };

/** A text, or its UTF-8 bytes (a response body: decoded in the worker, not on the event loop). */
export type RegexInput = string | Uint8Array;

export interface RegexRunner {
  /** First match with its groups (index in UTF-16 units of the decoded text). */
  exec(pattern: string, text: RegexInput, signal?: AbortSignal): Promise<RegexRun>;
  /** Whether the pattern matches anywhere in the text (no groups: the fastest path). */
  test(pattern: string, text: RegexInput, signal?: AbortSignal): Promise<RegexTest>;
  /** Stops the worker threads. */
  close(): Promise<void>;
}

/** A pattern that passed the checks: its RE2 source and its groups. */
export interface UserPattern {
  source: string;
  groupCount: number;
  groupNames: string[];
}

// JavaScript's \s (ECMA-262 WhiteSpace + LineTerminator), and the complement of it for \S inside a class.
const JS_SPACE = '\\t\\n\\u000b\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const JS_NON_SPACE =
  '\\u0000-\\u0008\\u000e-\\u001f\\u0021-\\u009f\\u00a1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e' +
  '\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\u{10FFFF}';
const JS_DOT = '[^\\n\\r\\u2028\\u2029]';

const UNSUPPORTED = {
  backref:
    'backreferences (\\1, \\k<name>) cannot run in linear time: match the repeated text explicitly, or capture both parts and compare them with patternComp',
  lookahead:
    'lookahead ((?=…), (?!…)) cannot run in linear time: match the following text as part of the pattern and put the part you want in a capture group (matchGroupName/matchIndex)',
  lookbehind:
    'lookbehind ((?<=…), (?<!…)) cannot run in linear time: match the preceding text as part of the pattern and put the part you want in a capture group (matchGroupName/matchIndex)',
  backspace: '[\\b] is not supported: write \\x08 for a backspace',
} as const;

/**
 * Rewrites a JavaScript-syntax pattern for RE2 with JavaScript's meaning of `.` and `\s`/`\S`; returns the reason
 * when the pattern uses a construct RE2 cannot run in linear time.
 */
function rewrite(p: string): { source: string } | { refused: string } {
  const dotAll = /\(\?[imsU-]*s[imsU-]*[:)]/.test(p);
  let out = '';
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const ch = p[i]!;
    if (ch === '\\') {
      const n = p[i + 1] ?? '';
      if (/[1-9]/.test(n) || (n === 'k' && p[i + 2] === '<')) return { refused: UNSUPPORTED.backref };
      if (n === 'b' && inClass) return { refused: UNSUPPORTED.backspace };
      if (n === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (n === 'S') out += inClass ? JS_NON_SPACE : `[^${JS_SPACE}]`;
      else out += ch + n;
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
      continue;
    }
    if (ch === '[') {
      // JavaScript's [] (nothing) and [^] (anything) are whole classes; translateRegExp knows them.
      if (p[i + 1] === ']' || (p[i + 1] === '^' && p[i + 2] === ']')) {
        const len = p[i + 1] === ']' ? 2 : 3;
        out += p.slice(i, i + len);
        i += len - 1;
        continue;
      }
      inClass = true;
      out += ch;
      if (p[i + 1] === '^') out += p[++i];
      continue;
    }
    if (ch === '(' && p[i + 1] === '?') {
      const rest = p.slice(i + 2, i + 4);
      if (rest.startsWith('=') || rest.startsWith('!')) return { refused: UNSUPPORTED.lookahead };
      if (rest === '<=' || rest === '<!') return { refused: UNSUPPORTED.lookbehind };
    }
    out += ch === '.' && !dotAll ? JS_DOT : ch;
  }
  return { source: RE2JS.translateRegExp(out) };
}

function explainEngineError(message: string): string {
  const m = message.replace(/^error parsing regexp:\s*/, '');
  if (/invalid repeat count/.test(m))
    return `${m}: repeat counts are limited to 1000 (and nested repeats to 1000 in all)`;
  if (/expression too large/.test(m))
    return 'the pattern is too large for linear-time matching: use smaller repeat counts';
  if (/invalid named capture|invalid or unsupported Perl syntax/.test(m)) {
    return `${m}: only (?:…), (?<name>…), (?P<name>…) and inline flags (?i) (?s) (?m) are supported`;
  }
  return m;
}

/** Checks a pattern without throwing: its RE2 form and groups, or why it cannot run (with what to write instead). */
export function checkUserRegex(pattern: string): { ok: true; pattern: UserPattern } | { ok: false; message: string } {
  if (pattern.length > MAX_PATTERN_CHARS) return { ok: false, message: `longer than ${MAX_PATTERN_CHARS} characters` };
  const r = rewrite(pattern);
  if ('refused' in r) return { ok: false, message: r.refused };
  try {
    const re = RE2JS.compile(r.source);
    return {
      ok: true,
      pattern: { source: r.source, groupCount: re.groupCount(), groupNames: Object.keys(re.namedGroups()) },
    };
  } catch (e) {
    return { ok: false, message: explainEngineError((e as Error).message) };
  }
}

/** Checks a pattern at create/update; throws AppError.badRequest naming the field when it cannot run. */
export function compileUserRegex(pattern: string, field = 'pattern'): UserPattern {
  const r = checkUserRegex(pattern);
  if (!r.ok) throw AppError.badRequest(`${field}: not a usable regular expression: ${r.message}`, field);
  return r.pattern;
}

/** The RE2 source a stored pattern runs as, or why it cannot run (bounded cache: run time costs one lookup). */
function createSourceCache(max = 2_000): (pattern: string) => { source: string } | { error: string } {
  const cache = new Map<string, { source: string } | { error: string }>();
  return (pattern) => {
    let v = cache.get(pattern);
    if (v) return v;
    const r = checkUserRegex(pattern);
    v = r.ok ? { source: r.pattern.source } : { error: `pattern cannot run: ${r.message}` };
    if (cache.size >= max) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, v);
    return v;
  };
}

export type RegexRunnerOptions = RegexPoolOptions & { maxInputChars?: number };

/**
 * A runner: patterns are checked once (cached), texts cut to `maxInputChars`, matches run in the worker pool with a
 * hard bound. A stored pattern this engine refuses (saved before it) yields `{ ok: false }` naming the reason.
 */
export function createRegexRunner(opts: RegexRunnerOptions = {}): RegexRunner {
  const pool = createRegexPool({ timeoutMs: DEFAULT_REGEX_TIMEOUT_MS, ...opts });
  const maxInput = opts.maxInputChars ?? MAX_REGEX_INPUT_CHARS;
  const sourceOf = createSourceCache();
  const cut = (text: RegexInput): RegexInput => {
    if (typeof text === 'string') return text.length > maxInput ? text.slice(0, maxInput) : text;
    const view = text.byteLength > maxInput ? text.subarray(0, maxInput) : text;
    // A view of a larger buffer would copy all of it to the worker: copy just the view.
    return view.byteLength === view.buffer.byteLength ? view : new Uint8Array(view);
  };
  return {
    async exec(pattern, text, signal) {
      const s = sourceOf(pattern);
      if ('error' in s) return { ok: false, error: s.error };
      const r = await pool.run({ source: s.source, text: cut(text), mode: 'exec' }, signal);
      if (!r.ok) return r;
      if (r.match === null) return { ok: true, match: null };
      const groups = r.match.groups.map((v) => v ?? undefined);
      const named: Record<string, string | undefined> = {};
      for (const [k, v] of Object.entries(r.match.named)) named[k] = v ?? undefined;
      return { ok: true, match: { match: groups[0] ?? '', groups, named, index: r.match.index } };
    },
    async test(pattern, text, signal) {
      const s = sourceOf(pattern);
      if ('error' in s) return { ok: false, error: s.error };
      const r = await pool.run({ source: s.source, text: cut(text), mode: 'test' }, signal);
      return r.ok ? { ok: true, found: r.found } : r;
    },
    close: () => pool.close(),
  };
}
