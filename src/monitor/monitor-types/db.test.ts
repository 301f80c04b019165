import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { AppError } from '../../core/errors.js';
import { peerConfig, requirePeer, testContext } from '../../../test/support/peers.fixture.js';
import dbDefault, { dbType, targetOf } from './db.js';
import { runDbQuery } from './lib/db-drivers.js';
import type { CheckResult, MonitorConfig } from './types.js';

const P = peerConfig();
const pgc = (o: Record<string, string> = {}): MonitorConfig => ({
  name: 'db-pg',
  type: 'db',
  dbType: 'postgres',
  dbIp: P.postgres.host,
  dbPort: String(P.postgres.port),
  dbUser: P.postgres.user,
  dbPwd: P.postgres.password,
  dbDb: P.postgres.database,
  query: 'SELECT 42',
  ...o,
});
const myc = (o: Record<string, string> = {}): MonitorConfig => ({
  name: 'db-my',
  type: 'db',
  dbType: 'mysql',
  dbIp: P.mariadb.host,
  dbPort: String(P.mariadb.port),
  dbUser: P.mariadb.user,
  dbPwd: P.mariadb.password,
  dbDb: P.mariadb.database,
  query: 'SELECT 42',
  ...o,
});

async function check(c: MonitorConfig, timeoutMs = 3000): Promise<CheckResult> {
  const ctx = testContext(timeoutMs);
  try {
    return await dbType.check(c, ctx);
  } finally {
    ctx.dispose();
  }
}

async function closedPort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Polls until `f` returns 0 (server-side sessions end a moment after the client's close). */
async function eventuallyZero(f: () => Promise<number>, what: string): Promise<void> {
  let n = -1;
  for (let i = 0; i < 100; i++) {
    n = await f();
    if (n === 0) return;
    await sleep(100);
  }
  assert.fail(`${what}: ${n} still open`);
}

const pgAdmin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
  const c = new pg.Client({
    host: P.postgres.host,
    port: P.postgres.port,
    user: P.postgres.adminUser,
    database: P.postgres.database,
  });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
};
const myAdmin = async <T>(fn: (c: mysql.Connection) => Promise<T>): Promise<T> => {
  const c = await mysql.createConnection({ host: P.mariadb.host, port: P.mariadb.port, user: P.mariadb.adminUser });
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
};
const pgSessions = (like = '%'): Promise<number> =>
  pgAdmin(async (c) =>
    Number(
      (
        await c.query("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = 'monitor_ro' AND query LIKE $1", [
          like,
        ])
      ).rows[0].n,
    ),
  );
const mySessions = (like = '%'): Promise<number> =>
  myAdmin(async (c) => {
    const [rows] = await c.query(
      "SELECT count(*) AS n FROM information_schema.processlist WHERE user = 'monitor_ro' AND COALESCE(info, '') LIKE ?",
      [like],
    );
    return Number((rows as { n: number }[])[0]!.n);
  });

test('exports, required and secret fields', () => {
  assert.equal(dbDefault, dbType);
  assert.deepEqual(dbType.required, ['dbType', 'query'], 'only the two the spec marks required');
  assert.deepEqual(dbType.defaults, { dbIp: '127.0.0.1' });
  assert.deepEqual(dbType.secretFields, ['dbPwd']);
});

test('validate: each bad value names its field', () => {
  const table: [MonitorConfig, string][] = [
    [pgc({ dbType: 'oracle' }), 'dbType'],
    [pgc({ dbIp: 'a b' }), 'dbIp'],
    [pgc({ dbPort: '0' }), 'dbPort'],
    [pgc({ query: ' ' }), 'query'],
    [pgc({ patternComp: 'between' }), 'patternComp'],
    [pgc({ patternComp: 'number >' }), 'patternCompValCri'],
  ];
  for (const [c, field] of table) {
    assert.throws(
      () => dbType.validate!(c),
      (e: unknown) => e instanceof AppError && e.field === field,
      field,
    );
  }
  assert.doesNotThrow(() => dbType.validate!(myc({ dbPort: '' })));
});

type Row = {
  name: string;
  c: MonitorConfig;
  outcome: CheckResult['outcome'];
  msg?: RegExp;
  severity?: string;
  timeoutMs?: number;
};
const scenarios = (
  mk: (o?: Record<string, string>) => MonitorConfig,
  admin: Record<string, string>,
  sleepSql: string,
  extra: Row[],
): Row[] => [
  { name: 'query → up with figures', c: mk({ query: 'SELECT 42 AS a UNION ALL SELECT 7' }), outcome: 'up' },
  {
    name: 'number > holds → CRITICAL',
    c: mk({ patternComp: 'number >', patternCompValCri: '10' }),
    outcome: 'up',
    severity: 'CRITICAL',
  },
  { name: 'string == does not hold', c: mk({ patternComp: 'string ==', patternCompValCri: '41' }), outcome: 'up' },
  {
    name: 'number compare on text → error',
    c: mk({ query: "SELECT 'abc'", patternComp: 'number <', patternCompValCri: '1' }),
    outcome: 'error',
  },
  {
    name: 'SQL error → error with the server message',
    c: mk({ query: 'SELECT nope FROM nowhere' }),
    outcome: 'error',
    msg: /nowhere/,
  },
  {
    name: 'unknown user → error',
    c: mk({ dbUser: 'ghost_user', dbPwd: 'secret-pw-123' }),
    outcome: 'error',
    msg: /ghost_user/,
  },
  {
    name: 'two statements (stored before the guard) → exception',
    c: mk({ query: 'SELECT 1; SELECT 2' }),
    outcome: 'exception',
    msg: /only one statement/,
  },
  {
    name: 'a write (stored before the guard) → exception naming query',
    c: mk({ query: 'CREATE TABLE sentinel_ro_probe (a int)' }),
    outcome: 'exception',
    msg: /^query: .* health check is one SELECT/,
  },
  {
    name: 'a privileged login → exception before the query runs',
    c: mk({ ...admin, query: 'SELECT 1' }),
    outcome: 'exception',
    msg: /the login is privileged \((superuser|.*SUPER|ALL PRIVILEGES)/,
  },
  { name: 'query past the timeout → down', c: mk({ query: sleepSql }), outcome: 'down', timeoutMs: 800 },
  ...extra,
];

async function runTable(t: import('node:test').TestContext, rows: Row[], refusedCfg: MonitorConfig): Promise<void> {
  rows.push({ name: 'refused port → down', c: refusedCfg, outcome: 'down' });
  for (const row of rows) {
    await t.test(row.name, async () => {
      const r = await check(row.c, row.timeoutMs ?? 3000);
      assert.equal(r.outcome, row.outcome, JSON.stringify(r));
      assert.equal(r.severity, row.severity);
      if (row.msg) assert.match(r.message!, row.msg);
      assert.ok(!JSON.stringify(r).includes('secret-pw-123'), 'no password in the result');
    });
  }
}

test('postgres: scenario table', async (t) => {
  const skip = await requirePeer('postgres');
  if (skip) return t.skip(skip);
  const ok = await check(pgc({ query: 'SELECT 42 AS a, 1 AS b UNION ALL SELECT 7, 2' }));
  assert.deepEqual([ok.metrics?.rowCount, ok.details?.firstValue, ok.metrics?.value], [2, '42', 42]);
  assert.deepEqual(ok.details?.columns, ['a', 'b']);
  assert.equal(typeof ok.metrics?.queryMs, 'number');
  const rows = scenarios(pgc, { dbUser: P.postgres.adminUser, dbPwd: '' }, 'SELECT pg_sleep(30)', []);
  await runTable(t, rows, pgc({ dbPort: String(await closedPort()) }));
  await eventuallyZero(() => pgSessions('%pg_sleep(30)%'), 'cancelled pg_sleep on the server');
});

test('mysql: scenario table', async (t) => {
  const skip = await requirePeer('mariadb');
  if (skip) return t.skip(skip);
  const ok = await check(myc({ query: 'SELECT 42 AS a, 1 AS b UNION ALL SELECT 7, 2' }));
  assert.deepEqual([ok.metrics?.rowCount, ok.details?.firstValue, ok.metrics?.value], [2, '42', 42]);
  const admin = { dbUser: P.mariadb.adminUser, dbPwd: '' };
  const extra: Row[] = [
    {
      name: 'wrong password → error, password not echoed',
      c: myc({ dbPwd: 'secret-pw-123' }),
      outcome: 'error',
      msg: /Access denied/,
    },
  ];
  const rows = scenarios(myc, admin, 'SELECT SLEEP(30)', extra);
  await runTable(t, rows, myc({ dbPort: String(await closedPort()) }));
  await eventuallyZero(() => mySessions('%SLEEP(30)%'), 'killed SLEEP on the server');
});

test('driver level, past the statement and login guards: the read-only transaction and LOCAL INFILE refusal remain', async (t) => {
  for (const [peer, target, sql, msg] of [
    [
      'postgres',
      targetOf(pgc({ dbUser: P.postgres.adminUser, dbPwd: '' })),
      'CREATE TABLE sentinel_ro_probe (a int)',
      /read-only transaction/,
    ],
    [
      'mariadb',
      targetOf(myc({ dbUser: P.mariadb.adminUser, dbPwd: '' })),
      'CREATE TABLE sentinel_ro_probe (a int)',
      /READ ONLY transaction/i,
    ],
    [
      'mariadb',
      targetOf(myc({ dbUser: P.mariadb.adminUser, dbPwd: '' })),
      "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE nothing",
      /local infile/i,
    ],
  ] as const) {
    await t.test(`${peer}: ${sql}`, async (tt) => {
      const skip = await requirePeer(peer);
      if (skip) return tt.skip(skip);
      const r = await runDbQuery(target, sql, 3000, new AbortController().signal);
      assert.equal(r.ok, false, JSON.stringify(r));
      assert.match(!r.ok ? r.message : '', msg);
    });
  }
});

test('no connection leak: 200 runs per driver, then no server-side session of the monitor user', async (t) => {
  for (const [name, peer, cfg, count] of [
    ['postgres', 'postgres', pgc({ query: 'SELECT count(*) FROM pg_class' }), pgSessions],
    ['mysql', 'mariadb', myc({ query: 'SELECT count(*) FROM information_schema.tables' }), mySessions],
  ] as const) {
    await t.test(name, async (tt) => {
      const skip = await requirePeer(peer);
      if (skip) return tt.skip(skip);
      for (let i = 0; i < 200; i++) {
        const r = await check(cfg);
        assert.equal(r.outcome, 'up', JSON.stringify(r));
      }
      await eventuallyZero(() => count(), `${name} sessions after 200 runs`);
    });
  }
});

test('mssql (no server can be had here): refused port → down, silent TCP server → timeout → down', async () => {
  const ms = (port: number): MonitorConfig => ({
    name: 'db-ms',
    type: 'db',
    dbType: 'mssql',
    dbIp: '127.0.0.1',
    dbPort: String(port),
    dbUser: 'sa',
    dbPwd: 'secret-pw-123',
    query: 'SELECT 1',
  });
  const refused = await check(ms(await closedPort()));
  assert.equal(refused.outcome, 'down', JSON.stringify(refused));
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((s) => sockets.add(s)).listen(0, '127.0.0.1');
  await new Promise((r) => silent.once('listening', r));
  try {
    const r = await check(ms((silent.address() as net.AddressInfo).port), 700);
    assert.equal(r.outcome, 'down', JSON.stringify(r));
    assert.ok(!JSON.stringify(r).includes('secret-pw-123'));
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});
