import { test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { AppError } from '../../core/errors.js';
import { peerConfig, requirePeer, testContext } from '../../../test/support/peers.fixture.js';
import snmpDefault, { snmpType } from './snmp.js';
import { renderVarbind } from './lib/snmp-session.js';
import type { CheckResult, MonitorConfig } from './types.js';

const P = peerConfig().snmpd;
const SYS_SERVICES = '1.3.6.1.2.1.1.7.0'; // Integer 72 (set in the lab snmpd.conf)
const SYS_DESCR = '1.3.6.1.2.1.1.1.0';
const SYS_LOCATION = '1.3.6.1.2.1.1.6.0'; // "sentinel-lab"

const base = (o: Record<string, string> = {}): MonitorConfig => ({
  name: 'snmp',
  type: 'snmp',
  ip: P.host,
  port: String(P.port),
  version: 'v2c',
  community: P.community,
  snmpOid: SYS_SERVICES,
  ...o,
});
const v3 = (user: string, level: string, auth?: string, priv?: string, o: Record<string, string> = {}): MonitorConfig =>
  base({
    version: 'v3',
    community: '',
    v3Username: user,
    v3SecurityLevel: level,
    ...(auth ? { v3AuthProtocol: auth, v3AuthPassword: P.authPassword } : {}),
    ...(priv ? { v3PrivProtocol: priv, v3PrivPassword: P.privPassword } : {}),
    ...o,
  });

async function check(c: MonitorConfig, timeoutMs = 10_000): Promise<CheckResult> {
  const ctx = testContext(timeoutMs);
  try {
    return await snmpType.check(c, ctx);
  } finally {
    ctx.dispose();
  }
}

const udpHandles = (): number => process.getActiveResourcesInfo().filter((r) => r === 'UDPWRAP').length;

test('exports, required and secret fields', () => {
  assert.equal(snmpDefault, snmpType);
  assert.deepEqual(snmpType.required, ['ip', 'snmpOid', 'version']);
  assert.deepEqual(snmpType.secretFields, ['community', 'v3AuthPassword', 'v3PrivPassword']);
});

test('validate: each bad value names its field', () => {
  const table: [MonitorConfig, string][] = [
    [base({ ip: '-x' }), 'ip'],
    [base({ port: '70000' }), 'port'],
    [base({ snmpOid: '1.3.x' }), 'snmpOid'],
    [base({ snmpOid: 'sysUpTime.0' }), 'snmpOid'],
    [base({ version: 'v4' }), 'version'],
    [base({ community: '' }), 'community'],
    [v3('', 'noAuthNoPriv'), 'v3Username'],
    [v3('u', 'authSomething'), 'v3SecurityLevel'],
    [v3('u', 'authNoPriv', 'SHA1024'), 'v3AuthProtocol'],
    [v3('u', 'authNoPriv', 'SHA', undefined, { v3AuthPassword: 'short' }), 'v3AuthPassword'],
    [v3('u', 'authPriv', 'SHA', '3DES'), 'v3PrivProtocol'],
    [v3('u', 'authPriv', 'SHA', 'AES', { v3PrivPassword: '' }), 'v3PrivPassword'],
    [base({ patternComp: 'number >=' }), 'patternComp'],
    [base({ patternComp: 'number >' }), 'patternCompValCri'],
  ];
  for (const [c, field] of table) {
    assert.throws(
      () => snmpType.validate!(c),
      (e: unknown) => e instanceof AppError && e.field === field,
      field,
    );
  }
  assert.doesNotThrow(() => snmpType.validate!(v3('u', 'authPriv', 'sha512', 'aes256')));
  assert.doesNotThrow(() => snmpType.validate!(base({ ip: '::1', snmpOid: '.1.3.6.1.2.1.1.3.0' })));
});

test('value rendering: OctetString text / hex, Counter64', () => {
  assert.equal(renderVarbind({ oid: '1', type: 4, value: Buffer.from('hello') }).value, 'hello');
  assert.equal(renderVarbind({ oid: '1', type: 4, value: Buffer.from([0, 0x1b, 0xff]) }).value, '00:1b:ff');
  const c64 = renderVarbind({ oid: '1', type: 70, value: Buffer.from('0100000000', 'hex') });
  assert.deepEqual([c64.type, c64.value, c64.numeric], ['Counter64', '4294967296', 4294967296]);
});

test('against snmpd: v1/v2c scenario table', async (t) => {
  const skip = await requirePeer('snmpd');
  if (skip) return t.skip(skip);
  const before = udpHandles();
  const table: { name: string; c: MonitorConfig; outcome: CheckResult['outcome']; severity?: string; msg?: RegExp }[] =
    [
      { name: 'v1 Integer', c: base({ version: 'v1' }), outcome: 'up' },
      { name: 'v2c Integer', c: base(), outcome: 'up' },
      { name: 'v2c OctetString', c: base({ snmpOid: SYS_LOCATION }), outcome: 'up' },
      {
        name: 'number > holds → CRITICAL',
        c: base({ patternComp: 'number >', patternCompValCri: '10' }),
        outcome: 'up',
        severity: 'CRITICAL',
      },
      { name: 'number < does not hold', c: base({ patternComp: 'number <', patternCompValCri: '10' }), outcome: 'up' },
      {
        name: 'string contains holds',
        c: base({ snmpOid: SYS_DESCR, patternComp: 'string contains', patternCompValCri: 'Linux' }),
        outcome: 'up',
        severity: 'CRITICAL',
      },
      {
        name: 'number compare on text → error',
        c: base({ snmpOid: SYS_LOCATION, patternComp: 'number >', patternCompValCri: '1' }),
        outcome: 'error',
        msg: /not a number/,
      },
      {
        name: 'noSuchObject → error',
        c: base({ snmpOid: '1.3.6.1.2.1.1.99.0' }),
        outcome: 'error',
        msg: /NoSuchObject/,
      },
      {
        name: 'noSuchInstance → error',
        c: base({ snmpOid: '1.3.6.1.2.1.1.7.5' }),
        outcome: 'error',
        msg: /NoSuchInstance/,
      },
      {
        name: 'v1 noSuchName → error',
        c: base({ version: 'v1', snmpOid: '1.3.6.1.2.1.1.99.0' }),
        outcome: 'error',
        msg: /NoSuchName/,
      },
      { name: 'wrong community → down (agent stays silent)', c: base({ community: 'wrong' }), outcome: 'down' },
    ];
  for (const row of table) {
    await t.test(row.name, async () => {
      const r = await check(row.c, 1000);
      assert.equal(r.outcome, row.outcome, JSON.stringify(r));
      assert.equal(r.severity, row.severity);
      if (row.msg) assert.match(r.message!, row.msg);
      if (r.outcome === 'up') assert.ok(r.details?.type && r.details?.value !== undefined);
    });
  }
  const ok = await check(base());
  assert.deepEqual([ok.details?.type, ok.details?.value, ok.metrics?.value], ['Integer', '72', 72]);
  const text = await check(base({ snmpOid: SYS_LOCATION }));
  assert.deepEqual(
    [text.details?.type, text.details?.value, text.metrics?.value],
    ['OctetString', 'sentinel-lab', undefined],
  );
  assert.equal(udpHandles(), before, 'every session closed');
});

test('against snmpd: v3 every level, auth and privacy protocol', async (t) => {
  const skip = await requirePeer('snmpd');
  if (skip) return t.skip(skip);
  const before = udpHandles();
  await t.test('noAuthNoPriv', async () => assert.equal((await check(v3('mon-noauth', 'noAuthNoPriv'))).outcome, 'up'));
  for (const auth of ['MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512']) {
    const a = auth.toLowerCase();
    await t.test(`authNoPriv ${auth}`, async () => {
      const r = await check(v3(`mon-${a}`, 'authNoPriv', auth));
      assert.equal(r.outcome, 'up', JSON.stringify(r));
    });
    for (const priv of ['DES', 'AES', 'AES192', 'AES256']) {
      await t.test(`authPriv ${auth}/${priv}`, async () => {
        const r = await check(v3(`mon-${a}-${priv.toLowerCase()}`, 'authPriv', auth, priv));
        assert.equal(r.outcome, 'up', JSON.stringify(r));
        assert.equal(r.metrics?.value, 72);
      });
    }
  }
  const failures: { name: string; c: MonitorConfig; msg: RegExp }[] = [
    { name: 'unknown user', c: v3('ghost', 'noAuthNoPriv'), msg: /Unknown User Name/ },
    {
      name: 'wrong auth password',
      c: v3('mon-sha', 'authNoPriv', 'SHA', undefined, { v3AuthPassword: 'wrong-pass' }),
      msg: /Wrong Digest/,
    },
    { name: 'wrong auth protocol', c: v3('mon-sha', 'authNoPriv', 'MD5'), msg: /authentication failed/ },
    {
      name: 'wrong privacy password',
      c: v3('mon-sha-aes', 'authPriv', 'SHA', 'AES', { v3PrivPassword: 'wrong-priv' }),
      msg: /decryption failed/,
    },
    { name: 'wrong privacy protocol', c: v3('mon-sha-aes', 'authPriv', 'SHA', 'DES'), msg: /decryption failed/ },
  ];
  for (const row of failures) {
    await t.test(`${row.name} → error`, async () => {
      const r = await check(row.c, 1200);
      assert.equal(r.outcome, 'error', JSON.stringify(r));
      assert.match(r.message!, row.msg);
      assert.ok(!r.message!.includes(P.authPassword) && !r.message!.includes(P.privPassword));
    });
  }
  assert.equal(udpHandles(), before, 'every session closed');
});

test('silent agent: timeout → down, session closed', async () => {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const before = udpHandles();
  try {
    const port = String(sock.address().port);
    for (const c of [base({ port }), v3('mon-sha-aes', 'authPriv', 'SHA', 'AES', { port })]) {
      const r = await check(c, 400);
      assert.equal(r.outcome, 'down', JSON.stringify(r));
    }
    assert.equal(udpHandles(), before);
  } finally {
    sock.close();
  }
});
