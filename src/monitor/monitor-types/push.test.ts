/**
 * push: the facts evaluatePush returns from what the ledger heard (no clock: times are given), the due time for a
 * period in seconds, a preset and a cron, the token's form, and validation naming the field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../core/errors.js';
import { createPushType, evaluatePush, hashPushToken } from './push.js';
import { lateAfterMs, PushLedger } from '../push/push-ledger.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);

test('due time: seconds from the last ping, a preset interval, the next cron fire; + grace', () => {
  assert.equal(lateAfterMs({ periodSeconds: '10', graceSeconds: '5' }, T0), T0 + 15_000);
  assert.equal(lateAfterMs({ sched: '5MIN', graceSeconds: '0' }, T0 + 7), T0 + 7 + 300_000);
  assert.equal(
    lateAfterMs({ sched: 'CRON', schedCron: '0 2 * * *', graceSeconds: '60' }, T0),
    T0 + 2 * 3_600_000 + 60_000,
  );
});

test('on time, late, failed, running, duration', () => {
  const c = { name: 'j', periodSeconds: '60', graceSeconds: '0' };
  const l = new PushLedger();
  l.watch('j', T0);
  assert.equal(evaluatePush(c, l.get('j')!, T0 + 1000, 'UTC').outcome, 'up');
  const late = evaluatePush(c, l.get('j')!, T0 + 61_000, 'UTC');
  assert.equal(late.outcome, 'down');
  assert.match(late.message!, /^late: no ping since watching began/);
  l.record('j', 'start', T0 + 100_000);
  l.record('j', 'success', T0 + 130_000, { message: 'ok' });
  const ok = evaluatePush(c, l.get('j')!, T0 + 131_000, 'UTC');
  assert.deepEqual([ok.outcome, ok.responseTimeMs, ok.metrics?.durationMs], ['up', 30_000, 30_000]);
  l.record('j', 'start', T0 + 140_000);
  const hung = evaluatePush(c, l.get('j')!, T0 + 201_000, 'UTC');
  assert.match(hung.message!, /^late: started at .*, no success or fail ping/);
  l.record('j', 'fail', T0 + 202_000, { exitCode: 2, message: 'no space' });
  const failed = evaluatePush(c, l.get('j')!, T0 + 203_000, 'UTC');
  assert.equal(failed.outcome, 'down');
  assert.match(failed.message!, /\(exit code 2\): no space$/);
  l.record('j', 'success', T0 + 204_000);
  const plain = evaluatePush(c, l.get('j')!, T0 + 205_000, 'UTC');
  assert.deepEqual(
    [plain.outcome, plain.responseTimeMs, plain.thresholdValue],
    ['up', 0, null],
    'no start: no duration',
  );
});

test('the token is 32 random bytes; only its hash is stored; periods are validated', () => {
  const t = createPushType(new PushLedger());
  const a = t.generatedSecrets!.token!();
  const b = t.generatedSecrets!.token!();
  assert.equal(Buffer.from(a.shown, 'base64url').length, 32);
  assert.notEqual(a.shown, b.shown);
  assert.equal(a.stored, hashPushToken(a.shown));
  assert.ok(t.secretFields.includes('token'));
  for (const [field, v] of [
    ['periodSeconds', '0'],
    ['periodSeconds', '1.5'],
    ['graceSeconds', '-1'],
    ['graceSeconds', '99999999'],
  ] as const) {
    assert.throws(
      () => t.validate!({ name: 'x', [field]: v }),
      (e: unknown) => e instanceof AppError && e.field === field,
      `${field}=${v}`,
    );
  }
});

test('what was heard elsewhere: a stored record applied keeps when this process began watching', () => {
  const c = { name: 'j', periodSeconds: '60', graceSeconds: '0' };
  const holder = new PushLedger();
  holder.watch('j', T0);
  holder.record('j', 'fail', T0 + 10_000, { exitCode: 3, message: 'broken' });
  const stored = holder.stored('j')!;
  assert.equal(stored.v, 1);
  assert.ok(!('seq' in stored) && !('watchedSinceMs' in stored), 'only what was heard is stored');
  // An instance watching since before the ping (a handover to it): the ping counts, the failure is known.
  const old = new PushLedger();
  old.watch('j', T0 - 5000);
  old.apply('j', stored, T0 + 11_000);
  assert.equal(old.get('j')!.watchedSinceMs, T0 - 5000);
  assert.equal(old.get('j')!.seq, 1, 'a run shows it saw the applied record');
  const r = evaluatePush(c, old.get('j')!, T0 + 12_000, 'UTC');
  assert.equal(r.outcome, 'down');
  assert.match(r.message!, /\(exit code 3\): broken$/);
  assert.equal(evaluatePush(c, old.get('j')!, T0 + 70_001, 'UTC').message?.startsWith('late: no ping since'), true);
  // An instance that began watching after the ping (a restart, a new member): a full period from its start.
  const fresh = new PushLedger();
  fresh.watch('j', T0 + 50_000);
  fresh.apply('j', stored, T0 + 50_000);
  assert.equal(lateAfterMs(c, T0 + 50_000), T0 + 110_000);
  assert.equal(evaluatePush(c, fresh.get('j')!, T0 + 100_000, 'UTC').message?.startsWith('job reported failure'), true);
  assert.equal(evaluatePush(c, fresh.get('j')!, T0 + 110_001, 'UTC').message?.startsWith('late:'), true);
});
