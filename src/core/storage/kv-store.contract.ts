/**
 * The one contract suite every KvStore driver must pass. A driver's test file calls `runKvStoreContract` with a
 * factory that opens the SAME persistent store on every call (so close/reopen proves persistence), an optional
 * cleanup run after the suite, and an optional `restoreBackup` that turns a file written by `backup()` into an open
 * store (so the suite proves the backup holds the data).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isAppError } from '../errors.js';
import type { KvEntry, KvKey, KvStore, RangeOptions } from './kv-store.js';
import { isStaleFence, staleFenceKeys } from './claims.js';

export interface KvStoreContractOptions {
  /** Opens a store holding the contents of a backup file written by `store.backup(file)`. */
  restoreBackup?: (backupFile: string) => Promise<KvStore>;
  /**
   * Opens a second store object on the same data, as another process would (drivers several processes can share).
   * Without it the suite proves only that a store never reports its own writes.
   */
  openPeer?: () => Promise<KvStore>;
}

/** Polls `check` every 20 ms until it holds; fails after `boundMs` (a generous bound, not a timing assertion). */
export async function eventually(check: () => boolean, what: string, boundMs = 10_000): Promise<number> {
  const startMs = Date.now();
  while (!check()) {
    if (Date.now() - startMs > boundMs) assert.fail(`not within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - startMs;
}

/** Keys of every kind, in the order every driver must return them. */
export const ORDERED_KEYS: KvKey[] = [
  -1e9,
  -1.5,
  -1,
  0,
  0.5,
  1,
  2,
  10,
  1e12,
  '',
  'A',
  'B',
  'a',
  ['a', -5],
  ['a', 1700000000000],
  ['a', 1700000000001],
  ['a', 'b'],
  'ab',
  'b',
  ['b', 1],
  'z',
  'é',
  '中',
  '\uff5e',
  '😀',
];

async function collect<V>(it: AsyncIterable<KvEntry<V>>): Promise<KvEntry<V>[]> {
  const out: KvEntry<V>[] = [];
  for await (const e of it) out.push(e);
  return out;
}

async function keysOf(store: KvStore, bucket: string, opts?: RangeOptions): Promise<KvKey[]> {
  return (await collect(store.bucket(bucket).range(opts))).map((e) => e.key);
}

function isValidation(err: unknown): boolean {
  return isAppError(err) && err.code === 'VALIDATION';
}

function shuffled<T>(xs: T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = (i * 7919 + 13) % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

export function runKvStoreContract(
  name: string,
  open: () => Promise<KvStore>,
  cleanup?: () => Promise<void>,
  options: KvStoreContractOptions = {},
): void {
  describe(`KvStore contract: ${name}`, () => {
    let store: KvStore;
    before(async () => {
      store = await open();
    });
    after(async () => {
      await store?.close();
      await cleanup?.();
    });

    it('puts, gets, getMany and deletes', async () => {
      const b = store.bucket('basic');
      assert.equal(b.name, 'basic');
      assert.equal(await b.get('missing'), undefined);
      await b.put('k1', { a: 1 });
      await b.put(['k', 2], 'two');
      await b.put('k1', { a: 2 });
      assert.deepEqual(await b.get('k1'), { a: 2 });
      assert.deepEqual(await b.getMany(['k1', 'nope', ['k', 2]]), [{ a: 2 }, undefined, 'two']);
      assert.equal(await b.delete('k1'), true);
      assert.equal(await b.delete('k1'), false);
      assert.equal(await b.get('k1'), undefined);
    });

    it('round-trips values of every msgpack kind, binary included', async () => {
      const b = store.bucket('values');
      const values: Record<string, unknown> = {
        obj: { s: 'x', n: 1.25, neg: -7, big: 2 ** 40, t: true, f: false, nil: null, arr: [1, 'a', { z: [] }] },
        str: 'héllo 😀',
        num: 42,
        float: -0.125,
        bool: false,
        nul: null,
        empty: {},
        list: [1, 2, 3],
      };
      for (const [k, v] of Object.entries(values)) await b.put(k, v);
      for (const [k, v] of Object.entries(values)) assert.deepEqual(await b.get(k), v, k);
      const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
      await b.put('buf', bytes);
      await b.put('u8', new Uint8Array([9, 8, 7]));
      await b.put('nested', { payload: Buffer.from('abc') });
      const buf = await b.get<Uint8Array>('buf');
      assert.ok(buf instanceof Uint8Array);
      assert.deepEqual(Buffer.from(buf), bytes);
      assert.deepEqual(Buffer.from((await b.get<Uint8Array>('u8'))!), Buffer.from([9, 8, 7]));
      const nested = await b.get<{ payload: Uint8Array }>('nested');
      assert.equal(Buffer.from(nested!.payload).toString(), 'abc');
      await assert.rejects(b.put('undef', undefined), isValidation);
    });

    it('orders keys of every type identically (numbers, strings by UTF-8, composites)', async () => {
      const b = store.bucket('order');
      for (const k of shuffled(ORDERED_KEYS)) await b.put(k, String(k));
      assert.deepEqual(await keysOf(store, 'order'), ORDERED_KEYS);
      assert.deepEqual(await keysOf(store, 'order', { reverse: true }), [...ORDERED_KEYS].reverse());
      const n = store.bucket('normalized');
      await n.put(-0, 'zero');
      assert.equal(await n.get(0), 'zero');
      await n.put(['solo'], 'one-element');
      assert.equal(await n.get('solo'), 'one-element');
    });

    it('ranges with start (inclusive), end (exclusive), limit and reverse', async () => {
      const b = store.bucket('range');
      for (let i = 0; i < 10; i++) await b.put(['m', 1000 + i], i);
      await b.put(['l', 5], 'before');
      await b.put(['n', 0], 'after');
      const fwd = await collect(b.range({ start: ['m', 1002], end: ['m', 1005] }));
      assert.deepEqual(fwd, [
        { key: ['m', 1002], value: 2 },
        { key: ['m', 1003], value: 3 },
        { key: ['m', 1004], value: 4 },
      ]);
      assert.deepEqual(await keysOf(store, 'range', { start: ['m', 0], end: ['m', Infinity], limit: 2 }), [
        ['m', 1000],
        ['m', 1001],
      ]);
      // reverse: start is the inclusive HIGH bound, end the exclusive LOW bound
      assert.deepEqual(await keysOf(store, 'range', { start: ['m', 1005], end: ['m', 1002], reverse: true }), [
        ['m', 1005],
        ['m', 1004],
        ['m', 1003],
      ]);
      assert.deepEqual(
        await keysOf(store, 'range', { start: ['m', Infinity], end: ['m', 0], reverse: true, limit: 2 }),
        [
          ['m', 1009],
          ['m', 1008],
        ],
      );
      assert.deepEqual(await keysOf(store, 'range', { start: ['m', 1008] }), [
        ['m', 1008],
        ['m', 1009],
        ['n', 0],
      ]);
      assert.deepEqual(await keysOf(store, 'range', { end: ['m', 1001] }), [
        ['l', 5],
        ['m', 1000],
      ]);
      assert.deepEqual(await keysOf(store, 'range', { limit: 0 }), []);
      assert.equal((await keysOf(store, 'range')).length, 12);
    });

    it('pages through large ranges in order, both directions', async () => {
      const b = store.bucket('large');
      const n = 2500;
      await store.batch(
        Array.from({ length: n }, (_, i) => ({ type: 'put', bucket: 'large', key: ['s', i], value: i })),
      );
      let expected = 0;
      for await (const e of b.range<number>({ start: ['s', 0], end: ['s', n] })) {
        assert.equal(e.value, expected++);
      }
      assert.equal(expected, n);
      const rev = await collect(b.range<number>({ reverse: true, limit: 1500, start: ['s', 2200] }));
      assert.equal(rev.length, 1500);
      assert.deepEqual(rev[0]!.key, ['s', 2200]);
      assert.deepEqual(rev[1499]!.key, ['s', 701]);
      const early = b.range({})[Symbol.asyncIterator]();
      assert.deepEqual((await early.next()).value?.key, ['s', 0]);
      await early.return?.();
      assert.equal(await b.count(), n);
    });

    it('deleteRange deletes [start, end) and returns the count; count and clear', async () => {
      const b = store.bucket('delrange');
      for (let i = 0; i < 20; i++) await b.put(i, i);
      assert.equal(await b.count(), 20);
      assert.equal(await b.deleteRange({ start: 5, end: 10 }), 5);
      assert.deepEqual(await keysOf(store, 'delrange', { end: 11 }), [0, 1, 2, 3, 4, 10]);
      assert.equal(await b.deleteRange({ start: 15 }), 5);
      assert.equal(await b.deleteRange({ end: 2 }), 2);
      assert.equal(await b.count(), 8);
      assert.equal(await b.deleteRange({}), 8);
      assert.equal(await b.count(), 0);
      await b.put('again', 1);
      await b.clear();
      assert.equal(await b.count(), 0);
      assert.equal(await b.get('again'), undefined);
    });

    it('validates bucket names and keys', async () => {
      for (const bad of ['', 'has space', 'a/b', 'x'.repeat(65), 'ü']) {
        assert.throws(() => store.bucket(bad), isValidation, bad);
      }
      assert.doesNotThrow(() => store.bucket('Ok_name-1.x'));
      const b = store.bucket('keys');
      const badKeys = [NaN, [], [['nested']], true, null, undefined, { a: 1 }, 'x'.repeat(2000)];
      for (const k of badKeys) {
        await assert.rejects(async () => b.put(k as KvKey, 1), isValidation, JSON.stringify(k) ?? 'undefined');
      }
      await assert.rejects(async () => store.dropBuckets(['bad name']), isValidation);
    });

    it('batch is atomic across buckets', async () => {
      await store.bucket('batch-b').put('gone', 1);
      await store.batch([
        { type: 'put', bucket: 'batch-a', key: 1, value: 'a1' },
        { type: 'put', bucket: 'batch-b', key: 2, value: 'b2' },
        { type: 'delete', bucket: 'batch-b', key: 'gone' },
      ]);
      assert.equal(await store.bucket('batch-a').get(1), 'a1');
      assert.equal(await store.bucket('batch-b').get(2), 'b2');
      assert.equal(await store.bucket('batch-b').get('gone'), undefined);
      const failing = [
        [
          { type: 'put', bucket: 'batch-a', key: 10, value: 'x' },
          { type: 'put', bucket: 'bad name', key: 1, value: 1 },
        ],
        [
          { type: 'put', bucket: 'batch-a', key: 11, value: 'x' },
          { type: 'put', bucket: 'batch-b', key: NaN, value: 1 },
        ],
        [
          { type: 'delete', bucket: 'batch-a', key: 1 },
          { type: 'put', bucket: 'batch-b', key: 'k', value: undefined },
        ],
      ] as const;
      for (const ops of failing) {
        await assert.rejects(store.batch(ops as never), isValidation);
      }
      assert.equal(await store.bucket('batch-a').get(10), undefined);
      assert.equal(await store.bucket('batch-a').get(11), undefined);
      assert.equal(await store.bucket('batch-a').get(1), 'a1');
      assert.equal(await store.bucket('batch-b').count(), 1);
      await store.batch([]);
    });

    it('handles 100 parallel puts', async () => {
      const b = store.bucket('parallel');
      await Promise.all(Array.from({ length: 100 }, (_, i) => b.put(['p', i], { i })));
      assert.equal(await b.count(), 100);
      const got = await b.getMany(Array.from({ length: 100 }, (_, i) => ['p', i] as KvKey));
      assert.deepEqual(
        got,
        Array.from({ length: 100 }, (_, i) => ({ i })),
      );
    });

    it('lists buckets with key counts, and drops buckets', async () => {
      store.bucket('listed-empty');
      await store.bucket('listed').put('a', 1);
      await store.bucket('listed').put('b', 2);
      await store.bucket('to-drop-1').put('x', 1);
      await store.bucket('to-drop-2').put('y', 1);
      const infos = await store.buckets();
      const byName = new Map(infos.map((i) => [i.name, i]));
      assert.equal(byName.get('listed')?.keys, 2);
      assert.equal(byName.get('listed-empty')?.keys, 0);
      assert.equal(byName.get('to-drop-1')?.keys, 1);
      await store.dropBuckets(['to-drop-1', 'to-drop-2', 'never-existed']);
      const names = (await store.buckets()).map((i) => i.name);
      assert.ok(!names.includes('to-drop-1') && !names.includes('to-drop-2') && !names.includes('never-existed'));
      assert.ok(names.includes('listed'));
      assert.equal(await store.bucket('to-drop-1').get('x'), undefined);
    });

    it('persists data and bucket list across close and reopen', async () => {
      await store.bucket('persist').put(['p', 1], { kept: true });
      store.bucket('persist-empty');
      await store.bucket('persist-empty').count();
      await store.close();
      store = await open();
      assert.deepEqual(await store.bucket('persist').get(['p', 1]), { kept: true });
      const names = (await store.buckets()).map((i) => i.name);
      assert.ok(names.includes('persist') && names.includes('persist-empty') && names.includes('order'));
      assert.deepEqual(await keysOf(store, 'order'), ORDERED_KEYS);
    });

    it('reports changes other store objects commit to a watched bucket, never its own', async () => {
      const seen: Array<KvKey | undefined> = [];
      const stop = store.watch('watched', (k) => void seen.push(k));
      await store.bucket('watched').put('own', 1);
      await store.batch([{ type: 'put', bucket: 'watched', key: 'own2', value: 2 }]);
      if (!options.openPeer) {
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(seen, []);
        stop();
        return;
      }
      const peer = await options.openPeer();
      try {
        const stopPeer = peer.watch('watched', () => undefined);
        const pb = peer.bucket('watched');
        await pb.put('a', 1);
        await pb.delete('own');
        await peer.batch([
          { type: 'put', bucket: 'watched', key: ['b', 2], value: 2 },
          { type: 'put', bucket: 'unwatched', key: 'x', value: 0 },
        ]);
        await pb.clear();
        await eventually(() => seen.length >= 4, 'four changes reported');
        assert.deepEqual(seen, ['a', 'own', ['b', 2], undefined]);
        stop();
        await pb.put('after-unsubscribe', 1);
        await peer.bucket('unwatched').put('y', 1);
        stopPeer();
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(seen.length, 4);
      } finally {
        await peer.close();
      }
    });

    it('counts attempts atomically: the max-th blocks the key, a blocked key counts nothing', async () => {
      const id = `t${Date.now()}-${Math.random()}`;
      const k = (key: string, max: number) => ({ key: `${id}:${key}`, max, windowMs: 60_000, blockMs: 30_000 });
      const results = await Promise.all(Array.from({ length: 8 }, () => store.attempts.hit([k('a', 5), k('b', 100)])));
      assert.equal(results.filter((w) => w === 0).length, 5, 'exactly five of eight concurrent attempts counted');
      for (const w of results.filter((x) => x > 0)) assert.ok(w > 25_000 && w <= 30_000, String(w));
      assert.ok((await store.attempts.hit([k('b', 100)])) === 0, 'b counted only the allowed attempts');
      await store.attempts.release([`${id}:b`], `${id}:a`);
      assert.equal(await store.attempts.hit([k('a', 5)]), 0, 'a cleared');
      if (!options.openPeer) return;
      const peer = await options.openPeer();
      try {
        for (let i = 0; i < 2; i++) assert.equal(await peer.attempts.hit([k('c', 4)]), 0);
        for (let i = 0; i < 2; i++) assert.equal(await store.attempts.hit([k('c', 4)]), 0);
        assert.ok((await peer.attempts.hit([k('c', 4)])) > 0, 'the peer sees the count of both');
      } finally {
        await peer.close();
      }
    });

    it('claims: one owner per key until released or expired; a peer sees them', async () => {
      const id = `c${Date.now()}-${Math.random()}`;
      const k = (n: string) => `${id}:${n}`;
      assert.deepEqual((await store.claims.claim([k('1'), k('2')], 'a', 60_000)).sort(), [k('1'), k('2')]);
      assert.deepEqual(await store.claims.claim([k('2'), k('3')], 'b', 60_000), [k('3')], 'k2 is held by a');
      assert.deepEqual((await store.claims.claim([k('1'), k('2')], 'a', 60_000)).sort(), [k('1'), k('2')], 'renewed');
      await store.claims.release([k('2'), k('3')], 'a');
      assert.deepEqual(await store.claims.claim([k('2'), k('3')], 'c', 60_000), [k('2')], "a released k2, not b's k3");
      const racers = await Promise.all(
        ['p', 'q', 'r', 's', 't'].map((o) => store.claims.claim([k('race')], o, 60_000)),
      );
      assert.equal(racers.filter((r) => r.length === 1).length, 1, 'exactly one of five concurrent claims wins');
      await store.claims.claim([k('short')], 'a', 150);
      assert.deepEqual(await store.claims.claim([k('short')], 'b', 60_000), [], 'not yet expired');
      await new Promise((r) => setTimeout(r, 400));
      assert.deepEqual(await store.claims.claim([k('short')], 'b', 60_000), [k('short')], 'expired: taken over');
      assert.deepEqual(await store.claims.claim([k('short')], 'a', 60_000), [], 'the former owner cannot renew it');
      if (!options.openPeer) return;
      const peer = await options.openPeer();
      try {
        assert.deepEqual(await peer.claims.claim([k('1'), k('4')], 'b', 60_000), [k('4')], 'the peer sees a holds k1');
        await store.claims.release([k('1')], 'a');
        assert.deepEqual(await peer.claims.claim([k('1')], 'b', 60_000), [k('1')]);
      } finally {
        await peer.close();
      }
    });

    it('fences: a batch under an older epoch than the stored one writes nothing', async () => {
      const f = `f${Date.now()}-${Math.random()}`;
      const b = store.bucket('fenced');
      await store.batch([{ type: 'put', bucket: 'fenced', key: 'x', value: 2 }], { fences: [{ key: f, epoch: 2 }] });
      const stale = await store
        .batch(
          [
            { type: 'put', bucket: 'fenced', key: 'x', value: 1 },
            { type: 'put', bucket: 'fenced', key: 'y', value: 1 },
          ],
          {
            fences: [
              { key: `${f}-other`, epoch: 9 },
              { key: f, epoch: 1 },
            ],
          },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(isStaleFence(stale), `refused as stale: ${String(stale)}`);
      await store.batch([], { fences: [{ key: `${f}-third`, epoch: 3 }] });
      const both = await store
        .batch([{ type: 'put', bucket: 'fenced', key: 'y', value: 1 }], {
          fences: [
            { key: `${f}-third`, epoch: 2 },
            { key: `${f}-fresh`, epoch: 1 },
            { key: f, epoch: 1 },
          ],
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.deepEqual([...staleFenceKeys(both)].sort(), [f, `${f}-third`], 'the refusal names every stale key');
      assert.deepEqual([await b.get('x'), await b.get('y')], [2, undefined], 'nothing of the refused batch landed');
      await store.batch([{ type: 'put', bucket: 'fenced', key: 'x', value: 3 }], { fences: [{ key: f, epoch: 2 }] });
      await store.batch([], { fences: [{ key: f, epoch: 5 }] });
      await assert.rejects(
        store.batch([{ type: 'put', bucket: 'fenced', key: 'x', value: 4 }], { fences: [{ key: f, epoch: 4 }] }),
        isStaleFence,
        'a stamp with no ops raised the epoch',
      );
      await store.batch([{ type: 'put', bucket: 'fenced', key: 'z', value: 1 }], {
        fences: [{ key: `${f}-other`, epoch: 1 }],
      });
      assert.equal(await b.get('x'), 3);
      if (!options.openPeer) return;
      const peer = await options.openPeer();
      try {
        await assert.rejects(
          peer.batch([{ type: 'put', bucket: 'fenced', key: 'x', value: 9 }], { fences: [{ key: f, epoch: 3 }] }),
          isStaleFence,
          'the peer is fenced by the same epochs',
        );
      } finally {
        await peer.close();
      }
    });

    it('writes a consistent online backup while writers continue', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'kv-backup-'));
      try {
        const b = store.bucket('backup');
        await store.batch(
          Array.from({ length: 500 }, (_, i) => ({ type: 'put', bucket: 'backup', key: i, value: { i } })),
        );
        await b.put('bin', Buffer.from([1, 2, 3]));
        let writing = true;
        let extra = 0;
        const writer = (async () => {
          while (writing) await b.put(['w', extra++], 'concurrent');
        })();
        const file = join(dir, 'store.backup');
        const bytes = await store.backup(file);
        writing = false;
        await writer;
        assert.ok(bytes > 0);
        if (!options.restoreBackup) return;
        const copy = await options.restoreBackup(file);
        try {
          const cb = copy.bucket('backup');
          for (const i of [0, 250, 499]) assert.deepEqual(await cb.get(i), { i });
          assert.deepEqual(Buffer.from((await cb.get<Uint8Array>('bin'))!), Buffer.from([1, 2, 3]));
          const copied = (await collect(cb.range())).length;
          assert.equal(await cb.count(), copied);
          assert.ok(copied >= 501 && copied <= 501 + extra);
          assert.deepEqual(await keysOf(copy, 'order'), ORDERED_KEYS);
          const names = (await copy.buckets()).map((i) => i.name);
          assert.ok(names.includes('persist-empty'));
        } finally {
          await copy.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}
