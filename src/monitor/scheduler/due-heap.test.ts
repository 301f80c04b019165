import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DueHeap, type HeapEntry } from './due-heap.js';
import { LatenessHistogram } from './lateness-histogram.js';

interface E extends HeapEntry {
  name: number;
}

test('heap pops in (dueMs, seq) order through pushes, updates and removals', () => {
  const heap = new DueHeap<E>();
  const all: E[] = [];
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 2000; i++) {
    const e: E = { name: i, dueMs: Math.floor(rnd() * 500), seq: i, heapIndex: -1 };
    all.push(e);
    heap.push(e);
  }
  for (let i = 0; i < 500; i++) {
    const e = all[Math.floor(rnd() * all.length)]!;
    if (i % 2 === 0) heap.remove(e);
    else {
      e.dueMs = Math.floor(rnd() * 500);
      heap.update(e);
    }
  }
  const inHeap = all.filter((e) => heap.has(e));
  assert.equal(heap.size, inHeap.length);
  inHeap.sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq);
  const popped: E[] = [];
  for (let e = heap.pop(); e !== undefined; e = heap.pop()) popped.push(e);
  assert.deepEqual(
    popped.map((e) => e.name),
    inHeap.map((e) => e.name),
  );
  assert.ok(all.every((e) => e.heapIndex === -1));
});

test('lateness histogram percentiles within 3.2 %', () => {
  const h = new LatenessHistogram();
  for (let v = 1; v <= 10_000; v++) h.record(v);
  const s = h.summary();
  assert.equal(s.count, 10_000);
  assert.equal(s.maxMs, 10_000);
  assert.ok(Math.abs(s.p50Ms - 5000) / 5000 < 0.032, `p50 ${s.p50Ms}`);
  assert.ok(Math.abs(s.p99Ms - 9900) / 9900 < 0.032, `p99 ${s.p99Ms}`);
  assert.equal(s.meanMs, 5000.5);
  h.record(-5);
  assert.equal(h.quantile(0), 0, 'negative lateness counts as 0');
  h.reset();
  assert.equal(h.summary().p99Ms, 0);
});
