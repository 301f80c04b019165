/**
 * docs/security.md §8 (review F9): the db monitor's statement guard and privileged-login refusal, through the HTTP API
 * as a `user`, against the real PostgreSQL and MariaDB. The review's queries (COPY … TO PROGRAM, pg_read_file,
 * INTO OUTFILE, LOAD_FILE, SET GLOBAL, …) are refused at create naming body.query; a privileged login (a superuser,
 * a member of pg_execute_server_program, a MariaDB account with FILE) runs EXCEPTION before its query. What remains
 * is the account: a function an allowed SELECT calls runs with the caller's rights, so the least-privilege role of
 * docs/checks-protocols.md is refused COPY … TO PROGRAM by the server itself, and no file appears.
 * On the code before the fix every create answered 201 and every run of a privileged login was OK.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { userClient } from '../support/api.kit.js';
import { peerConfig, requirePeer } from '../support/peers.fixture.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const P = peerConfig();
const id = `sec_checks_${process.pid}_${randomBytes(3).toString('hex')}`;
const role = { su: `${id}_su`, exec: `${id}_exec`, ro: `${id}_ro`, fn: `${id}_fn` };
const myUser = `${id}_file`.slice(0, 32);
const marker = path.join(os.tmpdir(), `${id}-copy-program`);
let h: MonitorHarness;
let bob: HttpsClient;
let pgAdmin: pg.Client | undefined;
let myAdmin: mysql.Connection | undefined;

before(async () => {
  h = await startMonitor();
  bob = await userClient(h, 'bob', 'user', 'Bob-pass-123');
});
after(async () => {
  await h?.stop();
  if (pgAdmin) {
    await pgAdmin.query(`DROP FUNCTION IF EXISTS ${role.fn}()`).catch(() => undefined);
    for (const r of [role.su, role.exec, role.ro]) {
      await pgAdmin.query(`DROP OWNED BY ${r}`).catch(() => undefined);
      await pgAdmin.query(`DROP ROLE IF EXISTS ${r}`).catch(() => undefined);
    }
    await pgAdmin.end();
  }
  if (myAdmin) {
    for (const host of ['127.0.0.1', 'localhost']) await myAdmin.query(`DROP USER IF EXISTS '${myUser}'@'${host}'`);
    await myAdmin.end();
  }
  fs.rmSync(marker, { force: true });
});

const common = { sched: '60MIN', state: 'off', probe: 'p1', display_name: 'x', timeout: '5' };
const pgMon = (name: string, user: string, query: string) => ({
  ...common,
  name,
  dbType: 'postgres',
  dbIp: P.postgres.host,
  dbPort: String(P.postgres.port),
  dbUser: user,
  dbPwd: 'Unused-pw-123',
  dbDb: P.postgres.database,
  query,
});
const myMon = (name: string, user: string, pwd: string, query: string) => ({
  ...common,
  name,
  dbType: 'mysql',
  dbIp: P.mariadb.host,
  dbPort: String(P.mariadb.port),
  dbUser: user,
  dbPwd: pwd,
  dbDb: P.mariadb.database,
  query,
});

test("the review's queries are refused at create, naming body.query", async () => {
  const queries: [Record<string, string>, RegExp][] = [
    [
      pgMon('g1', 'postgres', `COPY (SELECT 'x') TO PROGRAM 'id > ${marker}'`),
      /one SELECT, WITH statement \(found COPY\)/,
    ],
    [pgMon('g2', 'postgres', "SELECT pg_read_file('/etc/hostname')"), /pg_read_file\(\)/],
    [pgMon('g3', 'postgres', "SELECT * FROM pg_ls_dir('/tmp')"), /pg_ls_dir\(\)/],
    [pgMon('g4', 'postgres', 'SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity'), /pg_terminate_backend/],
    [pgMon('g5', 'postgres', 'SELECT 1; DROP TABLE x'), /only one statement/],
    [pgMon('g6', 'postgres', 'WITH d AS (DELETE FROM t RETURNING 1) SELECT * FROM d'), /DELETE/],
    [myMon('g7', 'root', '', `SELECT 'x' INTO OUTFILE '${marker}'`), /INTO/],
    [myMon('g8', 'root', '', "SELECT LOAD_FILE('/etc/hostname')"), /load_file\(\)/],
    [myMon('g9', 'root', '', 'SET GLOBAL max_connections = 7'), /found SET/],
    [myMon('g10', 'root', '', "SELECT 1 /*!50000 INTO OUTFILE '/tmp/x' */"), /executable comments/],
  ];
  for (const [body, msg] of queries) {
    const r = await bob.request('POST', '/db/create', { body });
    assert.equal(r.status, 400, `${body.query}: ${r.text}`);
    assert.equal(r.body.field, 'body.query', body.query);
    assert.match(r.body.message, msg, body.query);
  }
  const ok = await bob.request('POST', '/db/create', {
    body: pgMon('g-ok', P.postgres.user, "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"),
  });
  assert.equal(ok.status, 201, ok.text);
});

test('postgres: privileged logins run EXCEPTION before their query; the least-privilege role is stopped by the server', async (t) => {
  const skip = await requirePeer('postgres');
  if (skip) return t.skip(skip);
  pgAdmin = new pg.Client({
    host: P.postgres.host,
    port: P.postgres.port,
    user: P.postgres.adminUser,
    database: P.postgres.database,
  });
  await pgAdmin.connect();
  await pgAdmin.query(`CREATE ROLE ${role.su} LOGIN SUPERUSER`);
  await pgAdmin.query(`CREATE ROLE ${role.exec} LOGIN`);
  await pgAdmin.query(`GRANT pg_execute_server_program TO ${role.exec}`);
  // The least-privilege role of docs/checks-protocols.md.
  await pgAdmin.query(`CREATE ROLE ${role.ro} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
  await pgAdmin.query(`GRANT CONNECT ON DATABASE ${P.postgres.database} TO ${role.ro}`);
  await pgAdmin.query(`ALTER ROLE ${role.ro} SET default_transaction_read_only = on`);
  // A function an allowed SELECT can call, which runs a program: the statement guard cannot see inside it.
  await pgAdmin.query(
    `CREATE FUNCTION ${role.fn}() RETURNS int LANGUAGE plpgsql AS $f$ BEGIN ` +
      `EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch ${marker}'''; RETURN 1; END $f$`,
  );
  for (const [name, user] of [
    ['pg-su', role.su],
    ['pg-exec', role.exec],
  ]) {
    const c = await bob.request('POST', '/db/create', { body: pgMon(name!, user!, `SELECT ${role.fn}()`) });
    assert.equal(c.status, 201, c.text);
    const r = await bob.request('GET', `/monitor/run/${name}/show`);
    assert.equal(r.body.status, 'EXCEPTION', r.text);
    assert.match(r.body.message, /the login is privileged \((superuser|member of pg_execute_server_program)/);
  }
  const c = await bob.request('POST', '/db/create', { body: pgMon('pg-ro', role.ro, `SELECT ${role.fn}()`) });
  assert.equal(c.status, 201, c.text);
  const r = await bob.request('GET', `/monitor/run/pg-ro/show`);
  assert.equal(r.body.status, 'ERROR', r.text);
  assert.match(r.body.message, /pg_execute_server_program|permission denied|must be superuser/);
  assert.equal(fs.existsSync(marker), false, 'no program ran on the database host');
  const plain = await bob.request('POST', '/db/create', { body: pgMon('pg-ro-ok', role.ro, 'SELECT 1') });
  assert.equal(plain.status, 201, plain.text);
  assert.equal((await bob.request('GET', '/monitor/run/pg-ro-ok/show')).body.status, 'OK');
});

test('mariadb: a login with FILE runs EXCEPTION; the same query with SELECT-only grants runs OK', async (t) => {
  const skip = await requirePeer('mariadb');
  if (skip) return t.skip(skip);
  myAdmin = await mysql.createConnection({ host: P.mariadb.host, port: P.mariadb.port, user: P.mariadb.adminUser });
  for (const host of ['127.0.0.1', 'localhost']) {
    await myAdmin.query(`CREATE USER '${myUser}'@'${host}' IDENTIFIED BY 'File-pass-1'`);
    await myAdmin.query(`GRANT SELECT ON ${P.mariadb.database}.* TO '${myUser}'@'${host}'`);
    await myAdmin.query(`GRANT FILE ON *.* TO '${myUser}'@'${host}'`);
  }
  const c = await bob.request('POST', '/db/create', { body: myMon('my-file', myUser, 'File-pass-1', 'SELECT 1') });
  assert.equal(c.status, 201, c.text);
  const r = await bob.request('GET', '/monitor/run/my-file/show');
  assert.equal(r.body.status, 'EXCEPTION', r.text);
  assert.match(r.body.message, /the login is privileged \(FILE\)/);
  const ro = await bob.request('POST', '/db/create', {
    body: myMon('my-ro', P.mariadb.user, P.mariadb.password, 'SHOW GLOBAL STATUS LIKE "Uptime"'),
  });
  assert.equal(ro.status, 201, ro.text);
  assert.equal((await bob.request('GET', '/monitor/run/my-ro/show')).body.status, 'OK');
});
