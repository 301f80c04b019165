import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { AppError } from '../../core/errors.js';
import { requirePeer, testContext } from '../../../test/support/peers.fixture.js';
import pingDefault, { createPingType, fpingTiming, lossSeverity, pingResult, pingType } from './ping.js';
import { fpingArgs, isPingTarget, parseFpingOutput } from './lib/fping-batch.js';
import type { CheckResult, MonitorConfig } from './types.js';

const cfg = (ip: string): MonitorConfig => ({ name: `p-${ip}`, type: 'ping', ip });

async function check(ip: string, timeoutMs = 3000): Promise<CheckResult> {
  const ctx = testContext(timeoutMs);
  try {
    return await pingType.check(cfg(ip), ctx);
  } finally {
    ctx.dispose();
  }
}

test('exports: default and named are the same type', () => {
  assert.equal(pingDefault, pingType);
  assert.equal(pingType.id, 'ping');
  assert.deepEqual(pingType.required, ['ip']);
  assert.equal(typeof pingType.checkBatch, 'function');
});

test('validate: bad hosts are 400 on field ip; good ones pass', () => {
  for (const bad of ['', '-f', '--help', 'a b', 'x;rm -rf /', '1.2.3.4/24', 'höst']) {
    assert.throws(
      () => pingType.validate!(cfg(bad)),
      (e: unknown) => e instanceof AppError && e.field === 'ip',
      bad,
    );
  }
  for (const good of ['127.0.0.1', '::1', 'fe80::1', 'localhost', 'www.example.test', 'a-b.c_d.test.']) {
    assert.doesNotThrow(() => pingType.validate!(cfg(good)), good);
    assert.ok(isPingTarget(good));
  }
});

test('fping argv: options, then --, then targets (no shell)', () => {
  const args = fpingArgs(['127.0.0.1', '::1'], { count: 3, periodMs: 200, perPingTimeoutMs: 300, intervalMs: 1 });
  assert.deepEqual(args.slice(-3), ['--', '127.0.0.1', '::1']);
  assert.ok(args.includes('-C'));
});

test('timing fits the timeout', () => {
  for (const t of [500, 1000, 5000, 30000]) {
    const f = fpingTiming(t, 3, 1);
    assert.ok(f.periodMs * 2 + f.perPingTimeoutMs <= Math.max(t, 300), `timeout ${t}: ${JSON.stringify(f)}`);
  }
});

test('parser: captured fping -C output with full, partial and total loss and a name error', () => {
  const out = [
    '127.0.0.1 : 0.031 0.045 0.050',
    '::1       : 0.052 - 0.034',
    '10.9.9.9  : - - -',
    'nohost.invalid: Name or service not known',
    'host-a.test : - - 0.500',
  ].join('\n');
  const { stats, notes } = parseFpingOutput(out);
  assert.deepEqual(stats.get('127.0.0.1')?.rttsMs, [0.031, 0.045, 0.05]);
  assert.equal(stats.get('127.0.0.1')?.lossPct, 0);
  assert.equal(stats.get('::1')?.lossPct, 33.3);
  assert.equal(stats.get('::1')?.avgMs, 0.043);
  assert.equal(stats.get('10.9.9.9')?.received, 0);
  assert.equal(stats.get('host-a.test')?.lossPct, 66.7);
  assert.deepEqual(notes, ['nohost.invalid: Name or service not known']);
  const run = { stats, notes, exitCode: 1, aborted: false };
  // Scenario table over the parsed results: outcome and severity per loss class.
  const table: [string, CheckResult['outcome'], string | undefined][] = [
    ['127.0.0.1', 'up', undefined],
    ['::1', 'up', 'MINOR'],
    ['host-a.test', 'up', 'MAJOR'],
    ['10.9.9.9', 'down', undefined],
    ['nohost.invalid', 'down', undefined],
  ];
  for (const [target, outcome, severity] of table) {
    const r = pingResult(target, stats.get(target), run, 12);
    assert.equal(r.outcome, outcome, target);
    assert.equal(r.severity, severity, target);
  }
  assert.match(pingResult('nohost.invalid', undefined, run, 1).message!, /not known/);
  assert.equal(pingResult('::1', stats.get('::1'), run, 1).thresholdValue, 0.043);
});

test('loss severity levels', () => {
  assert.equal(lossSeverity(0), undefined);
  assert.equal(lossSeverity(10), 'MINOR');
  assert.equal(lossSeverity(50), 'MAJOR');
});

test('real fping: scenarios on loopback', async (t) => {
  const skip = await requirePeer('fping');
  if (skip) return t.skip(skip);
  const table: { name: string; ip: string; outcome: CheckResult['outcome'] }[] = [
    { name: 'IPv4 loopback', ip: '127.0.0.1', outcome: 'up' },
    { name: 'another 127/8 address', ip: '127.0.0.2', outcome: 'up' },
    { name: 'IPv6 loopback', ip: '::1', outcome: 'up' },
    { name: 'hostname', ip: 'localhost', outcome: 'up' },
    { name: 'unresolvable hostname', ip: 'nohost.invalid', outcome: 'down' },
  ];
  for (const row of table) {
    await t.test(row.name, async () => {
      const r = await check(row.ip);
      assert.equal(r.outcome, row.outcome, JSON.stringify(r));
      if (row.outcome === 'up') {
        assert.equal(r.metrics?.lossPct, 0);
        assert.ok(r.metrics.minMs! <= r.metrics.avgMs! && r.metrics.avgMs! <= r.metrics.maxMs!);
        assert.equal(r.thresholdValue, r.metrics.avgMs);
      }
    });
  }
});

test('real fping: one batch answers many monitors in config order (duplicates included)', async (t) => {
  const skip = await requirePeer('fping');
  if (skip) return t.skip(skip);
  const ips = ['127.0.0.3', '::1', 'nohost.invalid', '127.0.0.3', '-bad'];
  const ctx = testContext(3000);
  const rs = await pingType.checkBatch!(ips.map(cfg), ctx);
  ctx.dispose();
  assert.deepEqual(
    rs.map((r) => r.outcome),
    ['up', 'up', 'down', 'up', 'exception'],
  );
});

test('real fping: abort at the deadline stops fping and reports what it has', async (t) => {
  const skip = await requirePeer('fping');
  if (skip) return t.skip(skip);
  const type = createPingType({ count: 200 });
  const ctx = testContext(2000);
  // the runner aborts at the deadline; fping (200 echoes at ≥ 20 ms) would run longer, so it is stopped
  const r = await type.check(cfg('127.0.0.1'), ctx);
  ctx.dispose();
  assert.ok(ctx.signal.aborted);
  assert.equal(r.outcome, 'up');
  assert.ok(r.metrics!.sent! < 200);
});

test('100% loss → down: loopback inside a network namespace whose lo is down', async (t) => {
  const skip = await requirePeer('netns');
  if (skip) return t.skip(skip);
  const ns = `sentinel-ping-${process.pid}`;
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    const type = createPingType({ command: ['ip', 'netns', 'exec', ns, 'fping'] });
    const ctx = testContext(2000);
    const r = await type.check(cfg('127.0.0.1'), ctx);
    ctx.dispose();
    assert.equal(r.outcome, 'down', JSON.stringify(r));
    assert.equal(r.metrics?.lossPct, 100);
  } finally {
    execFileSync('ip', ['netns', 'del', ns]);
  }
});

test('fping missing → exception', async () => {
  const type = createPingType({ command: ['/nonexistent/fping'] });
  const ctx = testContext(1000);
  const r = await type.check(cfg('127.0.0.1'), ctx);
  ctx.dispose();
  assert.equal(r.outcome, 'exception');
});
