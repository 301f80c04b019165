import { test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, constants as fsc, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promises as dns } from 'node:dns';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../core/errors.js';
import { peerConfig, requirePeer, testContext } from '../../../test/support/peers.fixture.js';
import nslookupDefault, { nslookupType } from './nslookup.js';
import { answerMatches, parseDnsServer } from './lib/dns-query.js';
import type { CheckResult, MonitorConfig } from './types.js';

const server = peerConfig().dnsmasq.server;
const cfg = (o: Record<string, string>): MonitorConfig => ({ name: 'dns', type: 'nslookup', dnsServer: server, ...o });

async function check(c: MonitorConfig, timeoutMs = 2000): Promise<CheckResult> {
  const ctx = testContext(timeoutMs);
  try {
    return await nslookupType.check(c, ctx);
  } finally {
    ctx.dispose();
  }
}

test('exports and required fields', () => {
  assert.equal(nslookupDefault, nslookupType);
  assert.deepEqual(nslookupType.required, ['domain', 'recordType']);
});

test('validate: bad values name their field', () => {
  const table: [Record<string, string>, string][] = [
    [{ domain: '', recordType: 'A' }, 'domain'],
    [{ domain: 'a b.test', recordType: 'A' }, 'domain'],
    [{ domain: 'x.test', recordType: 'SRV' }, 'recordType'],
    [{ domain: 'x.test', recordType: 'A', dnsServer: '[::1' }, 'dnsServer'],
    [{ domain: 'x.test', recordType: 'A', dnsServer: '127.0.0.1:99999' }, 'dnsServer'],
    [{ domain: 'x.test', recordType: 'A', dnsServer: '[127.0.0.1]:53' }, 'dnsServer'],
  ];
  for (const [c, field] of table) {
    assert.throws(
      () => nslookupType.validate!(cfg(c)),
      (e: unknown) => e instanceof AppError && e.field === field,
      JSON.stringify(c),
    );
  }
  for (const s of ['127.0.0.1', '127.0.0.1:15353', '::1', '[::1]:15353', 'ns.example.test', 'ns.example.test:5353']) {
    assert.doesNotThrow(
      () => nslookupType.validate!(cfg({ domain: '_dmarc.x.test', recordType: 'txt', dnsServer: s })),
      s,
    );
  }
  assert.deepEqual(parseDnsServer('[::1]:15353'), { host: '::1', port: 15353 });
  assert.deepEqual(parseDnsServer('fd00::1'), { host: 'fd00::1', port: 53 });
});

test('expectedValue forms', () => {
  assert.ok(answerMatches('AAAA', ['fd00::10'], 'FD00:0:0::10'));
  assert.ok(answerMatches('MX', ['10 mail.lab.test'], 'mail.lab.test.'));
  assert.ok(answerMatches('MX', ['10 mail.lab.test'], '10 MAIL.lab.test'));
  assert.ok(!answerMatches('MX', ['10 mail.lab.test'], '20 mail.lab.test'));
  assert.ok(answerMatches('SOA', ['ns1.t h.t 1 2 3 4 5'], 'ns1.t'));
  assert.ok(!answerMatches('SOA', ['ns1.t h.t 1 2 3 4 5'], 'ns1.t h.t 9 2 3 4 5'));
});

test('against dnsmasq: scenario table', async (t) => {
  const skip = await requirePeer('dnsmasq');
  if (skip) return t.skip(skip);
  const table: { name: string; c: Record<string, string>; outcome: CheckResult['outcome']; msg?: RegExp }[] = [
    { name: 'A', c: { domain: 'www.lab.test', recordType: 'A', expectedValue: '127.0.0.10' }, outcome: 'up' },
    { name: 'A no expectation', c: { domain: 'www.lab.test', recordType: 'A' }, outcome: 'up' },
    {
      name: 'A mismatch',
      c: { domain: 'www.lab.test', recordType: 'A', expectedValue: '127.0.0.99' },
      outcome: 'error',
      msg: /expected/,
    },
    {
      name: 'AAAA canonical',
      c: { domain: 'www.lab.test', recordType: 'AAAA', expectedValue: 'fd00:0::10' },
      outcome: 'up',
    },
    {
      name: 'CNAME',
      c: { domain: 'alias.lab.test', recordType: 'CNAME', expectedValue: 'WWW.lab.test.' },
      outcome: 'up',
    },
    {
      name: 'MX priority host',
      c: { domain: 'lab.test', recordType: 'MX', expectedValue: '20 mail2.lab.test' },
      outcome: 'up',
    },
    {
      name: 'MX host alone',
      c: { domain: 'lab.test', recordType: 'MX', expectedValue: 'mail.lab.test' },
      outcome: 'up',
    },
    {
      name: 'MX wrong priority',
      c: { domain: 'lab.test', recordType: 'MX', expectedValue: '30 mail.lab.test' },
      outcome: 'error',
    },
    { name: 'TXT', c: { domain: 'lab.test', recordType: 'TXT', expectedValue: 'v=spf1 -all' }, outcome: 'up' },
    {
      name: 'TXT chunks joined',
      c: { domain: 'multi.lab.test', recordType: 'TXT', expectedValue: 'part one part two' },
      outcome: 'up',
    },
    { name: 'NS', c: { domain: 'lab.test', recordType: 'NS', expectedValue: 'ns1.lab.test' }, outcome: 'up' },
    {
      name: 'SOA full',
      c: {
        domain: 'lab.test',
        recordType: 'SOA',
        expectedValue: 'ns1.lab.test hostmaster.lab.test 2024010101 3600 600 86400 300',
      },
      outcome: 'up',
    },
    { name: 'SOA primary', c: { domain: 'lab.test', recordType: 'SOA', expectedValue: 'ns1.lab.test' }, outcome: 'up' },
    { name: 'NXDOMAIN', c: { domain: 'nope.lab.test', recordType: 'A' }, outcome: 'error', msg: /NXDOMAIN/ },
    { name: 'no answer', c: { domain: 'www.lab.test', recordType: 'MX' }, outcome: 'error', msg: /NOERROR/ },
    {
      name: '[v6]:port server',
      c: { domain: 'www.lab.test', recordType: 'A', dnsServer: '[::1]:15353' },
      outcome: 'up',
    },
    {
      name: 'localhost:port server',
      c: { domain: 'www.lab.test', recordType: 'A', dnsServer: 'localhost:15353' },
      outcome: 'up',
    },
  ];
  for (const row of table) {
    await t.test(row.name, async () => {
      const r = await check(cfg(row.c));
      assert.equal(r.outcome, row.outcome, JSON.stringify(r));
      if (row.msg) assert.match(r.message!, row.msg);
      assert.equal(typeof r.metrics?.dnsMs, 'number');
    });
  }
  const mx = await check(cfg({ domain: 'lab.test', recordType: 'MX' }));
  assert.deepEqual(mx.details?.answers, ['10 mail.lab.test', '20 mail2.lab.test']);
  const nx = await check(cfg({ domain: 'nope.lab.test', recordType: 'A' }));
  assert.equal(nx.details?.rcode, 'NXDOMAIN');
});

test('silent server: resolver timeout → down', async () => {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  try {
    const port = sock.address().port;
    const r = await check(cfg({ domain: 'www.lab.test', recordType: 'A', dnsServer: `127.0.0.1:${port}` }), 400);
    assert.equal(r.outcome, 'down', JSON.stringify(r));
  } finally {
    sock.close();
  }
});

test('closed port: refused → down', async () => {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const port = sock.address().port;
  await new Promise<void>((r) => sock.close(() => r()));
  const r = await check(cfg({ domain: 'www.lab.test', recordType: 'A', dnsServer: `127.0.0.1:${port}` }), 1000);
  assert.equal(r.outcome, 'down', JSON.stringify(r));
});

test('without dnsServer the Resolver starts with the system resolv.conf servers (no dns.lookup)', () => {
  assert.deepEqual(new dns.Resolver().getServers(), dns.getServers());
});

test('a lookup with a server does not need the libuv thread pool', async (t) => {
  const skip = await requirePeer('dnsmasq');
  if (skip) return t.skip(skip);
  // Occupy every pool thread with an open() of a FIFO that has no writer yet (it blocks until one opens).
  const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const dir = mkdtempSync(join(tmpdir(), 'ns-pool-'));
  const fifos = Array.from({ length: size }, (_, i) => join(dir, `f${i}`));
  for (const f of fifos) execFileSync('mkfifo', [f]);
  const blocked = fifos.map((f) => readFile(f));
  let poolFree = false;
  const lookup = dns.lookup('localhost').then(() => (poolFree = true));
  try {
    const r = await check(cfg({ domain: 'www.lab.test', recordType: 'A', expectedValue: '127.0.0.10' }));
    assert.equal(r.outcome, 'up');
    assert.equal(poolFree, false, 'the pool was busy while the Resolver answered');
  } finally {
    for (const f of fifos) closeSync(openSync(f, fsc.O_WRONLY | fsc.O_NONBLOCK));
    await Promise.all(blocked);
    await lookup;
    rmSync(dir, { recursive: true });
  }
});
