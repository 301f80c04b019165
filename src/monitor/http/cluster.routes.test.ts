/**
 * GET /cluster/series/{dbname}/{name} through the real service (mTLS): a members-only route (auth 'cluster'). The
 * attacks: no token, every group's token (admin included), a proof made with another key (another deployment's JWT
 * key), a real proof replayed for another monitor or method, an expired proof and one minted to last are all refused;
 * a proof made with this service's key (what another member sends) gets the rows, which decode to what was recorded.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { PEER_PROOF_HEADER, PeerProof } from '../../core/auth/peer-proof.js';
import { startMonitor, type MonitorHarness } from '../../../test/support/monitor.harness.js';
import { assertError, userClient } from '../../../test/support/api.kit.js';
import { decodeWalRecord } from '../history/history-wal.js';
import { seriesPath } from '../cluster/series-fetch.js';

let h: MonitorHarness;
const target = seriesPath('url', 'web-1');

before(async () => {
  h = await startMonitor();
  const t0 = Date.now() - 3 * 60_000;
  for (let i = 0; i < 3; i++)
    h.svc.history.append('url', 'web-1', { ts: t0 + i * 60_000, status: 'OK', responseTimeMs: 5 });
});
after(async () => h?.stop());

const withProof = (proof: string, path = target, method = 'GET') =>
  h.admin.request(method, path, { token: null, headers: { [PEER_PROOF_HEADER]: proof } });

test('no token: 401; a token of any group, admin included: 403 (no user may call a members-only route)', async () => {
  assertError(await h.admin.request('GET', target, { token: null }), 401);
  const ro = await userClient(h, 'cr-ro', 'readonly');
  const usr = await userClient(h, 'cr-user', 'user');
  for (const c of [ro, usr, h.admin]) assertError(await c.request('GET', target), 403);
});

test('a proof from another key, for another monitor or method, expired or minted to last: 401', async () => {
  const peers = h.svc.platform.peers;
  const badSig = 'bad signature';
  assertError(await withProof(new PeerProof(randomBytes(32)).sign('GET', target)), 401, badSig); // another deployment
  assertError(await withProof(peers.sign('GET', seriesPath('url', 'other')), target), 401, badSig); // replayed
  assertError(await withProof(peers.sign('POST', target)), 401, badSig);
  const key = h.svc.platform.tokens.derivedKey('sentinel-peer-proof-v1:monitor');
  assertError(await withProof(new PeerProof(key, () => Date.now() - 60_000).sign('GET', target)), 401, 'expired');
  assertError(await withProof(new PeerProof(key, () => Date.now() + 10 * 60_000).sign('GET', target)), 401, 'ahead');
  assertError(await withProof('v1.1.AAAA'), 401, 'malformed');
  // A proof AND an admin's token: still the proof that decides.
  const forged = new PeerProof(randomBytes(32)).sign('GET', target);
  assertError(await h.admin.request('GET', target, { headers: { [PEER_PROOF_HEADER]: forged } }), 401, badSig);
});

test("a member's signed request gets the rows it recorded; an unknown dbname is a 400", async () => {
  const r = await withProof(h.svc.platform.peers.sign('GET', target));
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.count, 3);
  const rows = decodeWalRecord(Buffer.from(r.body.rows, 'base64'));
  assert.deepEqual(
    rows.map((x) => [x.db, x.name, x.row.resp]),
    [
      ['url', 'web-1', 5],
      ['url', 'web-1', 5],
      ['url', 'web-1', 5],
    ],
  );
  const bad = '/cluster/series/nosuch/web-1';
  assertError(await withProof(h.svc.platform.peers.sign('GET', bad), bad), 400);
});
