import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LastResults } from './last-results.js';
import type { RunResult } from './run.service.js';

const run = (over: Partial<RunResult>): RunResult => ({
  name: 'm',
  type: 'url',
  ts: 1,
  status: 'OK',
  responseTimeMs: 5,
  outcome: 'up',
  attempts: 1,
  thresholds: { source: 'none' },
  downtime: false,
  ...over,
});

test('json() is JSON.stringify(get()) and follows every change (record, set, delete)', () => {
  const l = new LastResults();
  assert.equal(l.json('m'), undefined);
  l.record(run({ ts: 1 }));
  assert.equal(l.json('m'), JSON.stringify(l.get('m')));
  assert.equal(l.json('m'), '{"ts":1,"status":"OK","responseTimeMs":5}');
  l.record(run({ ts: 2, status: 'DOWN', message: 'refused', metrics: { certDaysLeft: 3 } }));
  assert.equal(l.json('m'), '{"ts":2,"status":"DOWN","responseTimeMs":5,"message":"refused","certDaysLeft":3}');
  l.set('m', { ts: 3, status: 'OK', responseTimeMs: 1 });
  assert.equal(l.json('m'), '{"ts":3,"status":"OK","responseTimeMs":1}');
  l.delete('m');
  assert.equal(l.json('m'), undefined);
});

test('a result with the same fields updates the entry in place; one whose fields differ replaces it (no stale field)', () => {
  const l = new LastResults();
  const origin = { probe: 'eu-1', location: 'Frankfurt', instance: 'a' };
  l.record(run({ ts: 1 }), origin);
  const first = l.get('m');
  l.record(run({ ts: 2, responseTimeMs: 7 }), origin);
  assert.equal(l.get('m'), first, 'same fields: the same object');
  assert.equal(
    l.json('m'),
    '{"ts":2,"status":"OK","responseTimeMs":7,"probe":"eu-1","location":"Frankfurt","instance":"a"}',
  );
  l.record(run({ ts: 3, status: 'DOWN', message: 'refused' }), origin);
  assert.notEqual(l.get('m'), first, 'a message appears: a new object');
  l.record(run({ ts: 4, status: 'DOWN', message: 'timeout' }), origin);
  assert.equal(
    l.json('m'),
    '{"ts":4,"status":"DOWN","responseTimeMs":5,"probe":"eu-1","location":"Frankfurt","instance":"a","message":"timeout"}',
  );
  l.record(run({ ts: 5 }));
  assert.deepEqual(l.get('m'), { ts: 5, status: 'OK', responseTimeMs: 5 }, 'the message and the origin are gone');
});
