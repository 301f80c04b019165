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
