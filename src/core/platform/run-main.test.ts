/** run-main's stop-signal rule: the first signal, its duplicates within SIGNAL_REPEAT_MS, then a forcing second. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SIGNAL_REPEAT_MS, stopSignals } from './run-main.js';

test('stopSignals: first, duplicate within the window (counted from the first), force after it', () => {
  let t = 1_000_000;
  const classify = stopSignals(() => t);
  assert.equal(classify(), 'first');
  t += 5;
  assert.equal(classify(), 'duplicate');
  t += SIGNAL_REPEAT_MS - 10;
  assert.equal(classify(), 'duplicate', 'still within the window of the first');
  t += 5;
  assert.equal(classify(), 'force');
  assert.equal(classify(), 'force');
});
