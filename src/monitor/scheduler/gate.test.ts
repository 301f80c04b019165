import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConcurrencyGate, type GateJob } from './gate.js';

interface TestJob extends GateJob {
  name: string;
  finish: () => void;
}

/** Jobs that record their start order and stay running until finished by the test. */
function harness(limit: number, classCaps?: Record<string, number>) {
  const gate = new ConcurrencyGate<TestJob>({ limit, classCaps });
  const order: string[] = [];
  const live = new Map<string, TestJob>();
  let maxRunning = 0;
  const make = (name: string, cls = 'default'): TestJob => {
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const job: TestJob = {
      name,
      cls,
      seq: 0,
      cancelled: false,
      finish: () => done(),
      start: () => {
        order.push(name);
        live.set(name, job);
        maxRunning = Math.max(maxRunning, gate.running);
        return finished.then(() => void live.delete(name));
      },
    };
    return job;
  };
  const tick = () => new Promise<void>((r) => setImmediate(r));
  return { gate, order, live, make, tick, maxRunning: () => maxRunning };
}

test('never more than the limit; the rest start in FIFO order', async () => {
  const h = harness(3);
  for (let i = 0; i < 10; i++) h.gate.enqueue(h.make(`j${i}`));
  assert.deepEqual(h.order, ['j0', 'j1', 'j2']);
  assert.equal(h.gate.queued, 7);
  while (h.live.size > 0) {
    [...h.live.values()][0]!.finish();
    await h.tick();
    assert.ok(h.gate.running <= 3);
  }
  assert.deepEqual(
    h.order,
    Array.from({ length: 10 }, (_, i) => `j${i}`),
  );
  assert.equal(h.maxRunning(), 3);
  assert.equal(h.gate.queued, 0);
  assert.equal(h.gate.running, 0);
});

test('setLimit is live both ways', async () => {
  const h = harness(2);
  for (let i = 0; i < 8; i++) h.gate.enqueue(h.make(`j${i}`));
  assert.equal(h.gate.running, 2);
  h.gate.setLimit(5);
  assert.equal(h.gate.running, 5, 'raising starts waiting jobs at once');
  h.gate.setLimit(1);
  for (const j of [...h.live.values()].slice(0, 4)) j.finish();
  await h.tick();
  assert.equal(h.gate.running, 1, 'lowering lets running jobs finish and starts none until below');
  [...h.live.values()][0]!.finish();
  await h.tick();
  assert.equal(h.gate.running, 1);
  assert.equal(h.order.length, 6);
});

test('a capped class does not block the others, and stays under its cap', async () => {
  const h = harness(4, { browser: 1 });
  h.gate.enqueue(h.make('b0', 'browser'));
  h.gate.enqueue(h.make('b1', 'browser'));
  h.gate.enqueue(h.make('b2', 'browser'));
  for (let i = 0; i < 3; i++) h.gate.enqueue(h.make(`u${i}`));
  assert.deepEqual(h.order, ['b0', 'u0', 'u1', 'u2']);
  assert.equal(h.gate.classRunning('browser'), 1);
  h.live.get('u0')?.finish();
  await h.tick();
  assert.equal(h.gate.classRunning('browser'), 1, 'b1 still waits for the browser slot');
  h.live.get('b0')?.finish();
  await h.tick();
  assert.deepEqual(h.order.slice(4), ['b1']);
  h.gate.setClassCaps({ browser: 3 });
  assert.deepEqual(h.order.slice(5), ['b2'], 'raised class cap applies live');
});

test('urgent jobs go first; cancelled jobs never start', async () => {
  const h = harness(1);
  h.gate.enqueue(h.make('running'));
  const a = h.make('a');
  h.gate.enqueue(a);
  h.gate.enqueue(h.make('b'));
  h.gate.enqueue(h.make('now1'), true);
  h.gate.enqueue(h.make('now2'), true);
  h.gate.cancel(a);
  assert.equal(h.gate.queued, 3);
  while (h.live.size > 0) {
    [...h.live.values()][0]!.finish();
    await h.tick();
  }
  assert.deepEqual(h.order, ['running', 'now1', 'now2', 'b']);
});

test('a job whose start throws releases its slot', async () => {
  const gate = new ConcurrencyGate({ limit: 1 });
  const started: string[] = [];
  gate.enqueue({
    cls: 'default',
    seq: 0,
    cancelled: false,
    start: () => {
      throw new Error('boom');
    },
  });
  gate.enqueue({
    cls: 'default',
    seq: 0,
    cancelled: false,
    start: () => {
      started.push('next');
      return Promise.resolve();
    },
  });
  await new Promise<void>((r) => setImmediate(r));
  assert.deepEqual(started, ['next']);
  assert.equal(gate.running, 0);
});
