/** PeerProof: a proof checks for its own method and target within its lifetime, with its own key only. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { PEER_PROOF_TTL_MS, PeerProof } from './peer-proof.js';

const key = randomBytes(32);

test('a proof is valid for its method and target until it expires', () => {
  const clock = { now: 1_000_000 };
  const p = new PeerProof(key, () => clock.now);
  const proof = p.sign('get', '/cluster/series/url/a');
  assert.equal(p.check(proof, 'GET', '/cluster/series/url/a'), undefined, 'the method is case-blind');
  assert.equal(p.check(proof, 'GET', '/cluster/series/url/b'), 'bad signature');
  assert.equal(p.check(proof, 'GET', '/cluster/series/url/a?x=1'), 'bad signature', 'the query is signed too');
  assert.equal(p.check(proof, 'POST', '/cluster/series/url/a'), 'bad signature');
  clock.now += PEER_PROOF_TTL_MS;
  assert.equal(p.check(proof, 'GET', '/cluster/series/url/a'), undefined, 'valid up to its expiry');
  clock.now += 1;
  assert.equal(p.check(proof, 'GET', '/cluster/series/url/a'), 'expired');
});

test('another key, a proof minted to last, a missing or malformed header are refused', () => {
  const p = new PeerProof(key);
  assert.equal(p.check(new PeerProof(randomBytes(32)).sign('GET', '/x'), 'GET', '/x'), 'bad signature');
  assert.equal(
    p.check(new PeerProof(key, () => Date.now() + 3 * 60_000).sign('GET', '/x'), 'GET', '/x'),
    'expires too far ahead',
  );
  assert.equal(p.check(undefined, 'GET', '/x'), 'missing');
  for (const bad of ['', 'v1', 'v2.1.abc', `v1.${Date.now() + 1000}.short`, `v1.-5.${'A'.repeat(43)}`]) {
    assert.equal(p.check(bad || undefined, 'GET', '/x'), bad ? 'malformed' : 'missing', bad);
  }
  // The right length, the wrong bytes (the comparison is constant-time).
  assert.equal(p.check(`v1.${Date.now() + 1000}.${'A'.repeat(43)}`, 'GET', '/x'), 'bad signature');
});
