import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../core/errors.js';
import { makeCheckContext } from './lib/check-context.kit.js';
import tcpTypeDefault, { tcpType } from './tcp.js';
import type { CheckResult, MonitorConfig } from './types.js';

let v4: net.Server;
let v6: net.Server | undefined;
let v4Port = 0;
let v6Port = 0;
const sockets = new Set<net.Socket>();

function listen(host: string): Promise<[net.Server, number]> {
  const s = net.createServer((c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  return new Promise((resolve, reject) => {
    s.once('error', reject);
    s.listen(0, host, () => resolve([s, (s.address() as net.AddressInfo).port]));
  });
}

before(async () => {
  [v4, v4Port] = await listen('127.0.0.1');
  try {
    [v6, v6Port] = await listen('::1');
  } catch {
    v6 = undefined;
  }
});
after(async () => {
  for (const c of sockets) c.destroy();
  await Promise.all([v4, v6].filter((s) => s).map((s) => new Promise<void>((r) => s!.close(() => r()))));
});

async function run(config: Partial<MonitorConfig>, timeoutMs = 5000): Promise<CheckResult> {
  const ctx = makeCheckContext({ timeoutMs });
  try {
    return await tcpType.check({ name: 'm', ...config }, ctx);
  } finally {
    ctx.dispose();
  }
}

describe('tcp type', () => {
  it('exports and validation', () => {
    assert.equal(tcpTypeDefault, tcpType);
    assert.deepEqual(tcpType.required, ['ip', 'port']);
    assert.deepEqual(tcpType.secretFields, []);
    const bad: [Partial<MonitorConfig>, string][] = [
      [{ ip: '', port: '80' }, 'ip'],
      [{ ip: 'a b', port: '80' }, 'ip'],
      [{ ip: 'http://x', port: '80' }, 'ip'],
      [{ ip: 'x', port: '0' }, 'port'],
      [{ ip: 'x', port: '65536' }, 'port'],
      [{ ip: 'x', port: '80.5' }, 'port'],
      [{ ip: 'x', port: 'eighty' }, 'port'],
    ];
    for (const [cfg, field] of bad) {
      assert.throws(
        () => tcpType.validate!({ name: 'm', ...cfg }),
        (e: unknown) => e instanceof AppError && e.field === field,
        JSON.stringify(cfg),
      );
    }
    tcpType.validate!({ name: 'm', ip: '::1', port: '443' });
    tcpType.validate!({ name: 'm', ip: '[::1]', port: '1' });
    tcpType.validate!({ name: 'm', ip: 'db.internal', port: '65535' });
  });

  it('open port → up with connectMs', async () => {
    const r = await run({ ip: '127.0.0.1', port: String(v4Port) });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(typeof r.metrics?.connectMs, 'number');
    assert.equal(r.responseTimeMs, r.metrics?.connectMs);
  });

  it('hostname → up', async () => {
    const r = await run({ ip: 'localhost', port: String(v4Port) });
    if (r.outcome !== 'up') assert.fail(`localhost did not connect: ${r.message}`);
  });

  it('IPv6 literal → up', async (t) => {
    if (!v6) {
      if (process.env.CI === 'true') assert.fail('no IPv6 loopback (::1) on this machine');
      return t.skip('no IPv6 loopback on this machine');
    }
    assert.equal((await run({ ip: '::1', port: String(v6Port) })).outcome, 'up');
    assert.equal((await run({ ip: '[::1]', port: String(v6Port) })).outcome, 'up');
  });

  it('closed port → down (refused)', async () => {
    const [s, port] = await listen('127.0.0.1');
    await new Promise<void>((r) => s.close(() => r()));
    const r = await run({ ip: '127.0.0.1', port: String(port) });
    assert.equal(r.outcome, 'down');
    assert.match(r.message ?? '', /ECONNREFUSED/);
  });

  it('unknown host → down', async () => {
    assert.equal((await run({ ip: 'no-such-host.invalid', port: '80' })).outcome, 'down');
  });

  it('unanswered SYN → down by the signal with "timeout after N ms"', async () => {
    // 192.0.2.0/24 (TEST-NET-1) is never routed; the connect hangs or fails unreachable: both are down.
    const r = await run({ ip: '192.0.2.1', port: '9' }, 200);
    assert.equal(r.outcome, 'down');
  });
});
