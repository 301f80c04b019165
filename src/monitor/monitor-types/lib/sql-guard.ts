/**
 * The db monitor's statement guard: a query must be exactly one statement of a kind that is a health check —
 * postgres: SELECT or WITH; mysql/mariadb: SELECT, WITH or SHOW; mssql: SELECT, WITH or EXEC of a named procedure with
 * literal arguments. Keywords that write, lock, run programs or reach files are refused anywhere outside strings and
 * comments (INTO OUTFILE, COPY, data-modifying WITH, SET, LOCK, KILL…), and so are the functions that read server
 * files, run SQL text or stop backends (pg_read_file, query_to_xml, dblink, LOAD_FILE, OPENROWSET, xp_…).
 *
 * This is a refusal of what is never a health check, not a boundary: a function or view the account may call can do
 * anything its owner allows. The account is the boundary (docs/checks-protocols.md lists the GRANTs per engine).
 * The query is lexed under every reading the server's settings allow (backslash escapes on/off, ANSI_QUOTES); all
 * readings must pass, so a string cannot hide a statement from the guard that the server would see.
 */
import { LexError, tokenize, type Dialect, type LexMode, type Token } from './sql-lexer.js';

export type { Dialect } from './sql-lexer.js';

const FIRST: Record<Dialect, readonly string[]> = {
  postgres: ['SELECT', 'WITH'],
  mysql: ['SELECT', 'WITH', 'SHOW'],
  mssql: ['SELECT', 'WITH', 'EXEC', 'EXECUTE'],
};

const DENY_COMMON = [
  'INSERT',
  'UPDATE',
  'DELETE',
  'MERGE',
  'UPSERT',
  'INTO',
  'CREATE',
  'ALTER',
  'DROP',
  'TRUNCATE',
  'RENAME',
  'GRANT',
  'REVOKE',
  'CALL',
  'LOCK',
  'UNLOCK',
  'EXECUTE',
  'EXEC',
  'PREPARE',
  'DEALLOCATE',
  'LOAD',
  'KILL',
  'SHUTDOWN',
];
const DENY: Record<Dialect, ReadonlySet<string>> = {
  postgres: new Set([...DENY_COMMON, 'COPY', 'VACUUM', 'CLUSTER', 'REINDEX', 'REFRESH', 'LISTEN', 'NOTIFY', 'IMPORT']),
  mysql: new Set([...DENY_COMMON, 'OUTFILE', 'DUMPFILE', 'HANDLER', 'INSTALL', 'UNINSTALL', 'FLUSH', 'PURGE']),
  mssql: new Set([
    ...DENY_COMMON,
    ...['SET', 'DECLARE', 'USE', 'GO', 'BEGIN', 'COMMIT', 'ROLLBACK', 'SAVE', 'IF', 'WHILE', 'RETURN', 'PRINT'],
    ...['RAISERROR', 'THROW', 'WAITFOR', 'GOTO', 'BACKUP', 'RESTORE', 'DBCC', 'RECONFIGURE', 'BULK', 'DENY'],
    ...['OPENROWSET', 'OPENDATASOURCE', 'OPENQUERY', 'OPENXML', 'REVERT', 'SETUSER', 'CHECKPOINT', 'READTEXT'],
    ...['WRITETEXT', 'UPDATETEXT', 'ENABLE', 'DISABLE', 'OPEN', 'FETCH', 'CLOSE'],
  ]),
};

/** Functions (and, for mssql, procedures) refused by name, case-insensitive; a trailing '*' is a prefix. */
const DENY_FUNCTIONS: Record<Dialect, readonly string[]> = {
  postgres: [
    ...['pg_read_file', 'pg_read_binary_file', 'pg_ls_dir', 'pg_stat_file', 'lo_import', 'lo_export', 'pg_file_*'],
    ...['pg_logdir_ls', 'pg_terminate_backend', 'pg_cancel_backend', 'pg_reload_conf', 'pg_rotate_logfile'],
    ...['pg_promote', 'pg_switch_wal', 'pg_create_restore_point', 'pg_backup_*', 'pg_start_backup', 'set_config'],
    ...['pg_stop_backup', 'pg_create_*_slot', 'pg_drop_replication_slot', 'pg_replication_origin_*', 'dblink*'],
    ...['query_to_xml*', 'query_to_xmlschema', 'cursor_to_xml*'],
  ],
  mysql: ['load_file', 'sys_exec', 'sys_eval', 'sys_set', 'sys_get'],
  mssql: [
    ...['xp_*', 'sp_executesql', 'sp_configure', 'sp_oa*', 'sp_addextendedproc', 'sp_addlogin', 'sp_addsrvrolemember'],
    ...['sp_password', 'sp_add_job*', 'sp_start_job', 'sp_execute_external_script', 'sp_makewebtask'],
  ],
};

const ENGINE = { postgres: 'postgres', mysql: 'mysql/mariadb', mssql: 'mssql' } as const;

function denied(d: Dialect, name: string): boolean {
  const n = name.toLowerCase();
  return DENY_FUNCTIONS[d].some((f) => {
    if (!f.includes('*')) return n === f;
    const [pre, post] = f.split('*') as [string, string];
    return n.startsWith(pre) && n.endsWith(post) && n.length >= pre.length + post.length;
  });
}

const nameOf = (t: Token | undefined): string | undefined =>
  t && (t.kind === 'word' || t.kind === 'ident') ? t.text : undefined;

/** mssql EXEC: a [server.]db.schema.name of up to 3 parts, then literal arguments ([@p =] value, …) only. */
function checkExec(d: Dialect, tokens: Token[]): string | undefined {
  let i = 1;
  const parts: string[] = [];
  for (;;) {
    const n = nameOf(tokens[i]);
    if (n === undefined) return 'EXEC needs the name of a stored procedure (no EXEC (…) of SQL text, no @variable)';
    parts.push(n);
    i++;
    if (tokens[i]?.text !== '.') break;
    i++;
  }
  if (parts.length > 3) return 'EXEC of a procedure on a linked server (four-part name) is not accepted';
  const proc = parts[parts.length - 1]!;
  if (denied(d, proc)) return `EXEC ${proc.toLowerCase()} is never a health check`;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    const ok =
      ['string', 'number', 'param'].includes(t.kind) ||
      [',', '=', '-', '+'].includes(t.text) ||
      (t.kind === 'word' && ['NULL', 'DEFAULT', 'N', 'OUTPUT', 'OUT'].includes(t.text));
    if (!ok) return `EXEC takes literal arguments only (found ${t.text})`;
  }
  return undefined;
}

/** Why the statement is refused under one reading, or undefined. */
function judge(d: Dialect, tokens: Token[]): string | undefined {
  const semi = tokens.findIndex((t) => t.text === ';' && t.kind === 'punct');
  if (semi !== -1 && semi !== tokens.length - 1) return 'only one statement is allowed (a ";" comes before the end)';
  const body = semi === -1 ? tokens : tokens.slice(0, -1);
  let first = 0;
  while (body[first]?.text === '(') first++;
  const head = body[first];
  const kinds = FIRST[d].filter((k) => k !== 'EXECUTE').join(', ');
  if (!head) return 'the query is empty';
  if (head.kind !== 'word' || !FIRST[d].includes(head.text))
    return `a ${ENGINE[d]} health check is one ${kinds} statement (found ${head.text})`;
  if (d === 'mssql' && (head.text === 'EXEC' || head.text === 'EXECUTE')) return checkExec(d, body.slice(first));
  for (let i = first + 1; i < body.length; i++) {
    const t = body[i]!;
    if (t.kind === 'word' && DENY[d].has(t.text)) return `${t.text} is never part of a health check`;
    const n = nameOf(t);
    if (n !== undefined && denied(d, n) && (d === 'mssql' || body[i + 1]?.text === '('))
      return `${n.toLowerCase()}() reads or changes the server, it is never part of a health check`;
  }
  return undefined;
}

const MODES: Record<Dialect, LexMode[]> = {
  postgres: [false, true].map((b) => ({ backslashEscapes: b, ansiQuotes: false })),
  mysql: [false, true].flatMap((b) => [false, true].map((a) => ({ backslashEscapes: b, ansiQuotes: a }))),
  mssql: [{ backslashEscapes: false, ansiQuotes: false }],
};

function judgeUnder(d: Dialect, sql: string, mode: LexMode): string | undefined {
  try {
    return judge(d, tokenize(sql, d, mode));
  } catch (e) {
    if (e instanceof LexError) return e.message;
    throw e;
  }
}

/**
 * Why `sql` is not accepted as a health check on this engine (a message that says what is allowed), or undefined.
 * Every reading of the text the server's settings allow must pass.
 */
export function refusedStatement(d: Dialect, sql: string): string | undefined {
  const verdicts = MODES[d].map((m) => judgeUnder(d, sql, m));
  const reason = verdicts.find((v) => v !== undefined);
  if (reason === undefined) return undefined;
  if (verdicts.every((v) => v !== undefined)) return reason;
  return `the query reads differently depending on the server's string escaping (a backslash in a string): write '' for a quote inside a string (${reason})`;
}
