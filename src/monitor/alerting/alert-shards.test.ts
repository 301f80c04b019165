/**
 * Alerting's fencing in a cluster, on a real PostgreSQL store (two store objects standing for two members) with a
 * hand-driven lease: a decision taken while the lease held but written after a newer holder stamped its epoch (a
 * paused member: its problem alert waited for an enrichment) writes nothing and sends nothing; the new holder, judging
 * from the stored state, sends the one DOWN alert. An acknowledgement made on a member not holding the lease in the
 * same moment as a status change on the holder (whose change feed is held back) is kept (decision 154).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createChannelRegistry } from '../../core/notify/registry.js';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import type { KvKey } from '../../core/storage/kv-store.js';
import type { PostgresStore } from '../../core/storage/postgres-store.js';
import { reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import type { Lease, Ownership, OwnershipListener } from '../cluster/coordinator.js';
import { shardFenceKey, shardOf } from '../cluster/shards.js';
import { type AlertMonitor, STATE_BUCKET, createAlertingService } from './alerting.service.js';
import { pgAlertingKit, silentLog as log, sleep } from './pg-alerting.kit.js';

/** The store with its change feed held back until release(): a member that has not heard of a change yet. */
function heldFeed(store: PostgresStore): { store: PostgresStore; release(): void } {
  let open = false;
  const queued: Array<() => void> = [];
  const proxy = new Proxy(store, {
    get(t, k) {
      if (k === 'watch')
        return (bucket: string, w: (key: KvKey | undefined) => unknown) =>
          t.watch(bucket, (key) => (open ? void w(key) : void queued.push(() => void w(key))));
      const v: unknown = Reflect.get(t, k, t);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  return {
    store: proxy,
    release() {
      open = true;
      for (const f of queued.splice(0)) f();
    },
  };
}

/** A lease the test holds, loses and hands over by hand. */
function fakeOwnership(lease: Lease): Ownership & { win(): void } {
  const listeners: OwnershipListener[] = [];
  return {
    leaseFor: () => lease,
    leaseAt: () => lease,
    holds: (l) => l === lease && lease.validUntilMono > 0,
    assignment: () => ({
      group: '*',
      shard: lease.shard,
      owner: 'x',
      epoch: lease.epoch,
      here: true,
      unassigned: false,
    }),
    onChange: (fn) => void listeners.push(fn),
    beforeRelease: () => undefined,
    noteResult: () => undefined,
    noteFenced: () => undefined,
    win: () => listeners.forEach((fn) => fn([{ ...lease, missedForMs: 0 }], [lease])),
  };
}

const kit = await pgAlertingKit('alsh');

if (kit instanceof Error) {
  reportUnavailable(`PostgreSQL not usable: ${kit.message}`);
} else {
  const probe = kit.store;
  describe('alerting in a cluster: fenced decisions', () => {
    const secrets = createSecretBox(randomBytes(32));
    const m: AlertMonitor = {
      name: 'fenced',
      type: 'tcp',
      notifyStatus: 'on',
      notifyAfter: '1',
      notifyChannels: 'webhook',
    };

    const member = async (store: PostgresStore, id: string, epoch: number, mon = m, holds = true) => {
      const shard = shardOf(mon.name);
      const fence = { key: shardFenceKey('*', shard), epoch };
      const lease: Lease = { group: '*', shard, epoch, validUntilMono: holds ? Infinity : 0, fence };
      const ownership = fakeOwnership(lease);
      const svc = createAlertingService({
        store,
        log,
        secrets,
        channels: createChannelRegistry({ agent: kit.tls.agent, timeoutMs: 5000 }),
        getMonitor: () => mon,
        cluster: {
          ownership,
          memberId: id,
          ttlMs: 2000,
          heartbeatMs: 200,
          monitor: (n) => (n === mon.name ? { probe: mon.probe } : undefined),
          namesIn: (group, s) => (group === '*' && s === shardOf(mon.name) ? [mon.name] : []),
        },
      });
      return { svc, lease, ownership };
    };

    it('a paused holder writes and sends nothing once a newer holder stamped; the new holder alerts once', async () => {
      const a = await member(probe, 'a', 1);
      await a.svc.start();
      await a.svc.channelSettings.set('webhook', { enabled: 'true', url: `${kit.hook.url}/h` });
      a.ownership.win();
      let diagnose!: (d: string | undefined) => void;
      // Decided under the held lease; queued only once the diagnosis settles — after A "paused" past its lease.
      a.svc.onResult(m, 'DOWN', { diagnosis: new Promise((r) => (diagnose = r)) });
      const peer = await kit.peer();
      const b = await member(peer, 'b', 2);
      await b.svc.start();
      b.ownership.win(); // stamps epoch 2, then reads the state
      await sleep(300);
      diagnose('nothing listens');
      await sleep(500);
      assert.equal(kit.hook.requests.length, 0, 'the stale decision sent nothing');
      assert.equal(await peer.bucket(STATE_BUCKET).get(m.name), undefined, 'and wrote no state');
      b.svc.onResult(m, 'DOWN');
      await kit.hook.waitFor(1);
      await sleep(500);
      assert.deepEqual(
        kit.hook.requests.map((r) => [r.body.kind, r.body.status]),
        [['problem', 'DOWN']],
      );
      b.svc.onResult(m, 'DOWN');
      await sleep(500);
      assert.equal(kit.hook.requests.length, 1, 'still DOWN: no repeat');
      await a.svc.stop();
      await b.svc.stop();
    });

    it('an acknowledgement on a non-holder in the moment the holder changes status is kept (not overwritten)', async () => {
      const acked: AlertMonitor = { ...m, name: 'acked' };
      const feed = heldFeed(await kit.peer());
      const a = await member(feed.store, 'a', 7, acked);
      await a.svc.start();
      await a.svc.channelSettings.set('webhook', { enabled: 'true', url: `${kit.hook.url}/h` });
      a.ownership.win();
      const sent = kit.hook.requests.length;
      a.svc.onResult(acked, 'DOWN');
      await kit.hook.waitFor(sent + 1);
      await sleep(300); // the problem's state is written
      const peer = await kit.peer();
      const b = await member(peer, 'b', 7, acked, false);
      await b.svc.start();
      const view = await b.svc.acknowledge('acked', { by: 'alice', note: 'on it' });
      assert.equal(view.acknowledged?.by, 'alice');
      // The holder has not heard of it yet (its change feed is held back) and its status changes: a state write.
      a.svc.onResult(acked, 'CRITICAL');
      await sleep(500);
      feed.release();
      let stored: { ack?: { by: string } } | undefined;
      for (let i = 0; i < 30 && stored?.ack?.by !== 'alice'; i++) {
        await sleep(100);
        stored = await peer.bucket(STATE_BUCKET).get(acked.name);
      }
      assert.equal(stored?.ack?.by, 'alice', 'the stored state keeps the acknowledgement');
      assert.equal((await a.svc.problems('acked'))[0]?.acknowledged?.note, 'on it', 'the holder follows it');
      assert.equal((await b.svc.problems('acked'))[0]?.acknowledged?.by, 'alice', 'the other member shows it');
      await a.svc.stop();
      await b.svc.stop();
    });
  });
}
