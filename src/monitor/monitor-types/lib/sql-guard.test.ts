import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { refusedStatement, type Dialect } from './sql-guard.js';
import { mysqlPrivileged } from './db-login-guard.js';

const accepts: [Dialect, string][] = [
  ['postgres', 'SELECT 1'],
  ['postgres', "select count(*) from orders where status = 'open';"],
  ['postgres', "SELECT 'a;b', $$ ; COPY $$, $t$ INTO $t$ FROM t -- ; DROP"],
  ['postgres', "/* a /* nested ; */ INTO */ SELECT E'it\\'s' AS \"update\""],
  ['postgres', 'WITH a AS (SELECT 1) SELECT * FROM a'],
  ['postgres', '(SELECT 1) UNION (SELECT 2)'],
  ['postgres', 'SELECT now() - pg_last_xact_replay_timestamp(), count(*) FROM pg_ls_waldir()'],
  ['mysql', 'SHOW GLOBAL STATUS LIKE "Threads_connected"'],
  ['mysql', "SELECT REPLACE(name, 'a', 'b'), CAST(x AS CHAR CHARACTER SET utf8mb4) FROM t # ; DROP\n"],
  ['mysql', "SELECT 'it''s', `into` FROM t -- ; DROP"],
  ['mssql', 'SELECT name FROM sys.databases WITH (NOLOCK)'],
  ['mssql', "EXEC dbo.health_check 1, N'x', @p = 2"],
  ['mssql', "EXECUTE [dbo].[health check] @level = 'deep';"],
];

const refuses: [Dialect, string, RegExp][] = [
  ['postgres', "COPY (SELECT 'x') TO PROGRAM 'id'", /one SELECT, WITH statement \(found COPY\)/],
  ['postgres', "SELECT pg_read_file('/etc/hostname')", /pg_read_file\(\)/],
  ['postgres', 'SELECT "pg_read_file"(\'/etc/passwd\')', /pg_read_file\(\)/],
  ['postgres', "SELECT pg_catalog.pg_ls_dir /* c */ ('/')", /pg_ls_dir\(\)/],
  ['postgres', "SELECT query_to_xml('copy (select 1) to program ''id''', true, true, '')", /query_to_xml\(\)/],
  ['postgres', "SELECT dblink_exec('host=x', 'DROP TABLE t')", /dblink_exec\(\)/],
  ['postgres', 'SELECT 1; COPY x TO STDOUT', /only one statement/],
  ['postgres', 'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', /DELETE/],
  ['postgres', 'SELECT * INTO t2 FROM t', /INTO/],
  ['postgres', 'SELECT * FROM t FOR UPDATE', /UPDATE/],
  ['postgres', 'SET default_transaction_read_only = off', /found SET/],
  ['postgres', "SELECT U&'\\0041'", /Unicode-escape/],
  ['postgres', "SELECT 'a\\' ; COPY x TO '/tmp/y' --'", /reads differently depending on the server's string escaping/],
  ['postgres', "SELECT 'unterminated", /unterminated/],
  ['postgres', '', /empty/],
  ['mysql', "SELECT 'x' INTO OUTFILE '/tmp/x'", /INTO/],
  ['mysql', "SELECT 1--1 INTO DUMPFILE '/tmp/x'", /INTO/],
  ['mysql', "SELECT LOAD_FILE('/etc/hostname')", /load_file\(\)/],
  ['mysql', "SELECT `load_file`('/etc/hostname')", /load_file\(\)/],
  ['mysql', 'SET GLOBAL max_connections = 7', /found SET/],
  ['mysql', 'KILL 5', /found KILL/],
  ['mysql', "SELECT 1 /*!50000 INTO OUTFILE '/tmp/x' */", /executable comments/],
  ['mysql', "SELECT 1 /*M!100000 INTO OUTFILE '/tmp/x' */", /executable comments/],
  ['mysql', "SELECT 'a\\' UNION SELECT LOAD_FILE('/etc/passwd') -- '", /reads differently/],
  ['mysql', 'SELECT 1 LOCK IN SHARE MODE', /LOCK/],
  ['mssql', "SELECT 1 EXEC xp_cmdshell 'id'", /EXEC is never/],
  ['mssql', "EXEC xp_cmdshell 'whoami'", /xp_cmdshell is never/],
  ['mssql', "EXEC master..xp_dirtree 'c:\\'", /xp_dirtree is never|literal arguments|EXEC needs/],
  ['mssql', "EXEC ('select 1')", /EXEC needs the name of a stored procedure/],
  ['mssql', 'EXEC @proc', /EXEC needs the name/],
  ['mssql', "EXEC sp_executesql N'select 1'", /sp_executesql is never/],
  ['mssql', 'EXEC dbo.p 1 SELECT 2', /literal arguments only \(found SELECT\)/],
  ['mssql', 'EXEC srv.db.dbo.p', /linked server/],
  ['mssql', "SELECT * FROM OPENROWSET(BULK 'c:/x', SINGLE_CLOB) a", /OPENROWSET/],
  ['mssql', "SELECT 1 WAITFOR DELAY '0:0:5'", /WAITFOR/],
  ['mssql', 'SELECT 1 SET NOCOUNT ON', /SET/],
  ['mssql', 'SELECT * INTO #t FROM x', /INTO/],
  ['mssql', 'SELECT [xp_cmdshell]', /xp_cmdshell/],
];

describe('db statement guard', () => {
  it('accepts one health-check statement per engine, whatever strings and comments hold', () => {
    for (const [d, q] of accepts) assert.equal(refusedStatement(d, q), undefined, `${d}: ${q}`);
  });

  it('refuses other kinds, more statements, file/program/SQL-text functions and ambiguous strings', () => {
    for (const [d, q, msg] of refuses) {
      const why = refusedStatement(d, q);
      assert.ok(why, `${d} should refuse: ${q}`);
      assert.match(why, msg, `${d}: ${q}`);
    }
  });
});

describe('mysql privileged grants', () => {
  it('reads global grants only', () => {
    assert.deepEqual(
      mysqlPrivileged([
        "GRANT SELECT, FILE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*X'",
        'GRANT ALL PRIVILEGES ON `app`.* TO `u`@`%`',
        'GRANT SUPER, CONNECTION ADMIN ON *.* TO `u`@`%`',
      ]),
      ['FILE', 'SUPER', 'CONNECTION ADMIN'],
    );
    assert.deepEqual(mysqlPrivileged(['GRANT USAGE ON *.* TO `u`@`%`', 'GRANT SELECT ON `app`.`t` TO `u`@`%`']), []);
  });
});
