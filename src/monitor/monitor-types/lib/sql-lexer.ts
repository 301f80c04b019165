/**
 * A small SQL lexer per engine for the db monitor's statement guard (sql-guard.ts): it drops comments and reads
 * string literals and quoted identifiers whole, so that a keyword inside a string or a comment is never taken for
 * one outside, and code hidden where the server would run it (MySQL's executable comments) is refused. It reads
 * each engine's own rules: PostgreSQL nested comments, E'' and dollar quotes; MySQL `#`, `-- ` (the space is
 * required), backticks, `\` escapes; T-SQL nested comments, [brackets]. `backslashEscapes` / `ansiQuotes` choose
 * between the server settings a string can be read under (the guard lexes every reading and needs all to agree).
 */
export type Dialect = 'postgres' | 'mysql' | 'mssql';

export interface LexMode {
  /** Backslash escapes in '…' strings (pg: standard_conforming_strings off; mysql: no NO_BACKSLASH_ESCAPES). */
  backslashEscapes: boolean;
  /** mysql: ANSI_QUOTES ("…" is an identifier, not a string). */
  ansiQuotes: boolean;
}

export type TokenKind = 'word' | 'ident' | 'string' | 'number' | 'param' | 'punct';
export interface Token {
  kind: TokenKind;
  /** word: upper-cased; ident: its content as written; punct: the character; others: the raw text. */
  text: string;
}

export class LexError extends Error {}

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
const MSSQL_WORD_CHAR = /[A-Za-z0-9_$#@\u0080-\uffff]/;

/** End index (exclusive) of a quoted run starting at `i` (the opening quote), with doubled-quote escapes. */
function quoted(sql: string, i: number, close: string, backslash: boolean): number {
  let j = i + 1;
  while (j < sql.length) {
    const c = sql[j]!;
    if (backslash && c === '\\') {
      j += 2;
      continue;
    }
    if (c === close) {
      if (sql[j + 1] === close) {
        j += 2;
        continue;
      }
      return j + 1;
    }
    j++;
  }
  throw new LexError('unterminated string or quoted identifier');
}

/** End index of a /* comment at i; nested for postgres and T-SQL, flat for mysql. */
function blockComment(sql: string, i: number, nested: boolean): number {
  let depth = 0;
  let j = i;
  while (j < sql.length) {
    if (sql.startsWith('/*', j)) {
      depth = nested ? depth + 1 : 1;
      j += 2;
    } else if (sql.startsWith('*/', j)) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  throw new LexError('unterminated /* comment');
}

function lineEnd(sql: string, i: number): number {
  const n = sql.indexOf('\n', i);
  return n === -1 ? sql.length : n + 1;
}

/** Returns the end of a dialect-specific construct at i (comment, string, identifier), or -1. */
function special(sql: string, i: number, d: Dialect, m: LexMode, out: Token[]): number {
  const c = sql[i]!;
  const next = sql[i + 1] ?? '';
  if (c === '-' && next === '-') {
    // MySQL reads '--' as a comment only when whitespace or a control character follows ("1--1" is arithmetic).
    if (d !== 'mysql' || i + 2 >= sql.length || /[\s\x00-\x1f]/.test(sql[i + 2]!)) return lineEnd(sql, i);
    return -1;
  }
  if (c === '#' && d === 'mysql') return lineEnd(sql, i);
  if (c === '/' && next === '*') {
    if (d === 'mysql' && /^\/\*M?!/.test(sql.slice(i, i + 4)))
      throw new LexError('executable comments (/*! … */) are not accepted');
    return blockComment(sql, i, d !== 'mysql');
  }
  if (c === "'") {
    const end = quoted(sql, i, "'", m.backslashEscapes && d !== 'mssql');
    out.push({ kind: 'string', text: sql.slice(i, end) });
    return end;
  }
  if (c === '"') {
    const end = quoted(sql, i, '"', d === 'mysql' && !m.ansiQuotes && m.backslashEscapes);
    const asString = d === 'mysql' && !m.ansiQuotes;
    out.push({ kind: asString ? 'string' : 'ident', text: asString ? sql.slice(i, end) : sql.slice(i + 1, end - 1) });
    return end;
  }
  if ((c === '`' && d === 'mysql') || (c === '[' && d === 'mssql')) {
    const end = quoted(sql, i, c === '`' ? '`' : ']', false);
    out.push({ kind: 'ident', text: sql.slice(i + 1, end - 1) });
    return end;
  }
  if (d === 'postgres') return specialPostgres(sql, i, out);
  return -1;
}

function specialPostgres(sql: string, i: number, out: Token[]): number {
  const c = sql[i]!;
  if ((c === 'u' || c === 'U') && sql[i + 1] === '&' && (sql[i + 2] === "'" || sql[i + 2] === '"'))
    throw new LexError("Unicode-escape strings and identifiers (U&'…') are not accepted");
  if ((c === 'e' || c === 'E') && sql[i + 1] === "'" && !WORD_CHAR.test(sql[i - 1] ?? ' ')) {
    const end = quoted(sql, i + 1, "'", true);
    out.push({ kind: 'string', text: sql.slice(i, end) });
    return end;
  }
  if (c === '$') {
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66));
    if (tag && !WORD_CHAR.test(sql[i - 1] ?? ' ')) {
      const close = sql.indexOf(tag[0], i + tag[0].length);
      if (close === -1) throw new LexError('unterminated dollar-quoted string');
      out.push({ kind: 'string', text: sql.slice(i, close + tag[0].length) });
      return close + tag[0].length;
    }
  }
  return -1;
}

export function tokenize(sql: string, d: Dialect, m: LexMode): Token[] {
  const out: Token[] = [];
  const wordChar = d === 'mssql' ? MSSQL_WORD_CHAR : WORD_CHAR;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const end = special(sql, i, d, m, out);
    if (end !== -1) {
      i = end;
      continue;
    }
    let j = i + 1;
    if (c === '@' || (c === '$' && /\d/.test(sql[i + 1] ?? ''))) {
      while (j < sql.length && (sql[j] === '@' || wordChar.test(sql[j]!))) j++;
      out.push({ kind: 'param', text: sql.slice(i, j) });
    } else if (/\d/.test(c)) {
      while (j < sql.length && /[\w.]/.test(sql[j]!)) j++;
      out.push({ kind: 'number', text: sql.slice(i, j) });
    } else if (WORD_START.test(c) || (d === 'mssql' && c === '#')) {
      while (j < sql.length && wordChar.test(sql[j]!)) j++;
      out.push({ kind: 'word', text: sql.slice(i, j).toUpperCase() });
    } else out.push({ kind: 'punct', text: c });
    i = j;
  }
  return out;
}
