/** The swap gate: reads run together, a swap runs alone, reads during a swap wait for it or answer 503. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from '../core/errors.js';
import { createSwapGate } from './swap-gate.js';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

test('a swap waits for reads in flight, and reads that arrive during it run after it', async () => {
  const gate = createSwapGate();
  const order: string[] = [];
  const slowRead = deferred();
  const r1 = gate.read(async () => {
    await slowRead.promise;
    order.push('read1');
  });
  const s = gate.swap(async () => {
    order.push('swap');
  });
  await new Promise((r) => setImmediate(r));
  const r2 = gate.read(async () => {
    order.push('read2');
  });
  slowRead.resolve();
  await Promise.all([r1, s, r2]);
  assert.deepEqual(order, ['read1', 'swap', 'read2']);
});

test('a read waiting longer than waitMs answers UNAVAILABLE; a failed swap releases the gate', async () => {
  const gate = createSwapGate({ waitMs: 20 });
  const hold = deferred();
  const s = gate.swap(() => hold.promise);
  await new Promise((r) => setImmediate(r));
  await assert.rejects(
    gate.read(async () => 1),
    (e: unknown) => isAppError(e) && e.status === 503 && e.retryAfterS === 1,
  );
  hold.resolve();
  await s;
  await assert.rejects(
    gate.swap(() => Promise.reject(new Error('boom'))),
    /boom/,
  );
  assert.equal(await gate.read(async () => 2), 2);
});
