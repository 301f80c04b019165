import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { AppError } from '../../../core/errors.js';
import { createNetworkPolicy, DEFAULT_DENY, parseCidrList } from './network-policy.js';

describe('network policy', () => {
  it('default denies only the metadata address (also IPv4-mapped)', () => {
    const p = createNetworkPolicy();
    assert.deepEqual(DEFAULT_DENY, ['169.254.169.254/32']);
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
