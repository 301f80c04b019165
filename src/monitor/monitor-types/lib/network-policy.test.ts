import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { AppError } from '../../../core/errors.js';
import { createNetworkPolicy, DEFAULT_DENY, parseCidrList, resolveChecked } from './network-policy.js';

describe('network policy', () => {
  it('default denies only the metadata addresses (also IPv4-mapped)', () => {
    const p = createNetworkPolicy();
    assert.deepEqual(DEFAULT_DENY, [
      '169.254.169.254/32',
      'fd00:ec2::254/128',
      '169.254.170.2/32',
      '100.100.100.200/32',
    ]);
    for (const a of ['fd00:ec2::254', '169.254.170.2', '100.100.100.200']) assert.ok(p.denies(a), a);
    assert.match(p.denies('169.254.169.254') ?? '', /169\.254\.169\.254\/32/);
    assert.ok(p.denies('::ffff:169.254.169.254'));
    for (const a of ['127.0.0.1', '10.1.2.3', '192.168.0.1', '169.254.169.253', '::1', 'fe80::1', '8.8.8.8']) {
      assert.equal(p.denies(a), undefined, a);
    }
  });

  it('explicit empty deny list denies nothing', () => {
    assert.equal(createNetworkPolicy({ deny: [] }).denies('169.254.169.254'), undefined);
  });

  it('allow list means only those; deny wins; IPv6 ranges', () => {
    const p = createNetworkPolicy({ allow: ['10.0.0.0/8', 'fd00::/8'], deny: ['10.9.0.0/16'] });
    assert.equal(p.denies('10.1.2.3'), undefined);
    assert.equal(p.denies('fd12::5'), undefined);
    assert.match(p.denies('10.9.1.1') ?? '', /denied/);
    assert.match(p.denies('192.168.1.1') ?? '', /not in the network policy's allowed ranges/);
    assert.match(p.denies('2001:db8::1') ?? '', /allowed ranges/);
    assert.ok(p.denies('not-an-ip'));
  });

  it('parseCidrList accepts v4/v6 CIDRs and bare addresses; rejects bad ones with 400', () => {
    assert.deepEqual(parseCidrList(' 10.0.0.0/8, ::1 ,fd00::/8,, 1.2.3.4'), [
      '10.0.0.0/8',
      '::1/128',
      'fd00::/8',
      '1.2.3.4/32',
    ]);
    for (const bad of ['10.0.0.0/33', '10.0.0/8', 'fd00::/129', 'host/24', '1.2.3.4/x']) {
      assert.throws(
        () => parseCidrList(bad, 'networkDeny'),
        (e: unknown) => e instanceof AppError && e.field === 'networkDeny',
        bad,
      );
    }
    assert.throws(() => createNetworkPolicy({ allow: ['nope'] }), AppError);
  });
});

test('verdicts are remembered per address and stay right past the memo bound (it is cleared, not wrong)', () => {
  const p = createNetworkPolicy({ deny: ['10.0.0.0/8'] });
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 12_000; i++) {
      const a = `10.${(i >> 8) & 255}.${i & 255}.1`;
      const b = `192.168.${(i >> 8) & 255}.${i & 255}`;
      assert.match(p.denies(a) ?? '', /denied by the network policy \(10\.0\.0\.0\/8\)/);
      assert.equal(p.denies(b), undefined);
    }
  }
  assert.match(p.denies('not-an-ip') ?? '', /is not an IP address/);
  assert.match(p.denies('not-an-ip') ?? '', /is not an IP address/);
});

test('unspecified addresses are judged as loopback; mapped and NAT64 forms as IPv4', () => {
  const v4 = createNetworkPolicy({ deny: ['127.0.0.0/8'] });
  for (const a of [
    '0.0.0.0',
    '0.1.2.3',
    '::',
    '[::]',
    '::0',
    '::ffff:0.0.0.0',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::7f00:1',
  ])
    assert.match(v4.denies(a) ?? '', /denied/, a);
  assert.equal(v4.denies('::1'), undefined, 'a v4 rule does not fence ::1 itself');
  const v6 = createNetworkPolicy({ deny: ['::1/128'] });
  assert.match(v6.denies('0.0.0.0') ?? '', /judged as loopback/);
  assert.equal(v6.denies('127.0.0.1'), undefined);
  const allowOnly = createNetworkPolicy({ allow: ['10.0.0.0/8'], deny: [] });
  assert.match(allowOnly.denies('0.0.0.0') ?? '', /allowed ranges/);
});

test('resolveChecked: literals as they are, names resolved and every address checked', async () => {
  const p = createNetworkPolicy({ deny: ['127.0.0.0/8'] });
  await assert.rejects(resolveChecked(p, '[::]'), { code: 'EPOLICY' });
  await assert.rejects(resolveChecked(p, 'localhost'), (e: Error & { code?: string }) => {
    assert.equal(e.code, 'EPOLICY');
    assert.match(e.message, /^localhost: address 127\.0\.0\.1 is denied/);
    return true;
  });
  const open = await resolveChecked(createNetworkPolicy(), 'localhost');
  assert.deepEqual([open.address, open.family], ['127.0.0.1', 4]);
  assert.equal((await resolveChecked(p, '10.0.0.1')).address, '10.0.0.1');
  await assert.rejects(
    resolveChecked(p, 'no-such-host.invalid'),
    (e: Error & { code?: string }) => e.code !== 'EPOLICY',
  );
});
