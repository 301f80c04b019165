import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type AlertState, acknowledge, evaluate, isWorse, policyFor, unacknowledge } from './alert-policy.js';

/** Runs a status sequence one minute apart; returns the alerts as compact strings. */
function run(
  seq: string[],
  fields: Record<string, string>,
  start?: AlertState,
): { alerts: string[]; state: AlertState | undefined } {
  const policy = policyFor(fields);
  let state = start;
  const alerts: string[] = [];
  seq.forEach((status, i) => {
    const d = evaluate(state, status, policy, i * 60_000);
    state = d.state;
    if (d.alert) alerts.push(`${i}:${d.alert.kind}:${d.alert.status}:${d.alert.reason}`);
  });
  return { alerts, state };
}

const on = (notifyAfter?: string, renotifyMinutes?: string) => ({
  notifyStatus: 'on',
  ...(notifyAfter ? { notifyAfter } : {}),
  ...(renotifyMinutes ? { renotifyMinutes } : {}),
});

describe('alert policy', () => {
  it('reads fields: notifyAfter defaults to 1, renotify to never, notify only when notifyStatus is on', () => {
    assert.deepEqual(policyFor({}), { notify: false, notifyAfter: 1, renotifyMs: 0 });
    assert.deepEqual(policyFor({ notifyStatus: 'ON', notifyAfter: '3', renotifyMinutes: '30' }), {
      notify: true,
      notifyAfter: 3,
      renotifyMs: 1_800_000,
    });
    assert.deepEqual(policyFor({ notifyStatus: 'on', notifyAfter: 'x', renotifyMinutes: '-5' }), {
      notify: true,
      notifyAfter: 1,
      renotifyMs: 0,
    });
  });

  it('emailOnF implies notify when notifyStatus is absent (records stored before it was filled in); off mutes', () => {
    assert.equal(policyFor({ emailOnF: 'true' }).notify, true);
    assert.equal(policyFor({ emailOnF: 'true', notifyStatus: 'off' }).notify, false);
    assert.equal(policyFor({ emailOnF: 'false' }).notify, false);
  });

  it('notifyAfter 1: every failure streak alerts once and recovers once', () => {
    const { alerts } = run(['OK', 'DOWN', 'DOWN', 'OK', 'DOWN', 'OK', 'OK'], on());
    assert.deepEqual(alerts, [
      '1:problem:DOWN:threshold',
      '3:recovery:OK:recovery',
      '4:problem:DOWN:threshold',
      '5:recovery:OK:recovery',
    ]);
  });

  it('notifyAfter 2: flapping below the threshold never alerts; a streak of 2 alerts once', () => {
    const { alerts } = run(
      ['OK', 'DOWN', 'OK', 'DOWN', 'OK', 'DOWN', 'DOWN', 'DOWN', 'DOWN', 'OK', 'DOWN', 'OK'],
      on('2'),
    );
    assert.deepEqual(alerts, ['6:problem:DOWN:threshold', '9:recovery:OK:recovery']);
  });

  it('notifyAfter 3 counts any mix of non-OK statuses and alerts with the current one', () => {
    const { alerts } = run(['MINOR', 'ERROR', 'CRITICAL', 'CRITICAL', 'OK'], on('3'));
    assert.deepEqual(alerts, ['2:problem:CRITICAL:threshold', '4:recovery:OK:recovery']);
  });

  it('a severity change while failing alerts again (MINOR → CRITICAL, ERROR → DOWN); holding does not', () => {
    const { alerts } = run(['MINOR', 'MINOR', 'CRITICAL', 'CRITICAL', 'ERROR', 'DOWN', 'DOWN', 'OK'], on());
    assert.deepEqual(alerts, [
      '0:problem:MINOR:threshold',
      '2:problem:CRITICAL:change',
      '4:problem:ERROR:change',
      '5:problem:DOWN:change',
      '7:recovery:OK:recovery',
    ]);
  });

  it('renotifyMinutes repeats a holding problem after the interval', () => {
    const { alerts } = run(Array(8).fill('DOWN'), on('1', '3'));
    assert.deepEqual(alerts, ['0:problem:DOWN:threshold', '3:problem:DOWN:renotify', '6:problem:DOWN:renotify']);
  });

  it('notifyStatus off sends no problem, but still resolves a problem already sent', () => {
    assert.deepEqual(run(['DOWN', 'DOWN', 'OK'], { notifyStatus: 'off' }).alerts, []);
    const open = run(['DOWN'], on()).state;
    assert.deepEqual(run(['DOWN', 'OK'], { notifyStatus: 'off' }, open).alerts, ['1:recovery:OK:recovery']);
  });

  it('DOWNTIME neither alerts nor counts; the streak resumes after the window', () => {
    // notifyAfter 3: DOWN, [window: DOWN DOWN DOWN as DOWNTIME], DOWN, DOWN → alert on the 3rd counted failure.
    const { alerts } = run(['DOWN', 'DOWNTIME', 'DOWNTIME', 'DOWNTIME', 'DOWN', 'DOWN', 'OK'], on('3'));
    assert.deepEqual(alerts, ['5:problem:DOWN:threshold', '6:recovery:OK:recovery']);
    // An open problem stays open through a window and recovers after it; no alert inside it.
    const r = run(['DOWN', 'DOWNTIME', 'DOWNTIME', 'OK'], on());
    assert.deepEqual(r.alerts, ['0:problem:DOWN:threshold', '3:recovery:OK:recovery']);
    // Still failing with the same status after the window: no repeat.
    assert.deepEqual(run(['DOWN', 'DOWNTIME', 'DOWN'], on()).alerts, ['0:problem:DOWN:threshold']);
  });

  it('a restart from the persisted state does not re-alert', () => {
    const first = run(['DOWN', 'DOWN'], on());
    const restored = JSON.parse(JSON.stringify(first.state)) as AlertState;
    assert.deepEqual(run(['DOWN', 'DOWN', 'OK'], on(), restored).alerts, ['2:recovery:OK:recovery']);
  });

  it('an acknowledged problem does not re-notify nor alert on a change that is not worse', () => {
    const open = run(['CRITICAL'], on('1', '2')).state;
    const acked = acknowledge(open, { by: 'alice', note: ' on it ' }, 30_000)!;
    assert.deepEqual(acked.ack, { by: 'alice', atMs: 30_000, note: 'on it', status: 'CRITICAL' });
    // renotify every 2 min would fire at 2, 4, 6; a fall to MINOR and back to CRITICAL is not worse than CRITICAL.
    const r = run(
      ['CRITICAL', 'CRITICAL', 'CRITICAL', 'MINOR', 'CRITICAL', 'CRITICAL', 'CRITICAL'],
      on('1', '2'),
      acked,
    );
    assert.deepEqual(r.alerts, []);
    assert.equal(r.state?.ack?.by, 'alice', 'still acknowledged');
    assert.equal(r.state?.alertedStatus, 'CRITICAL', 'the open problem follows the status silently');
  });

  it('a worse status alerts and ends the acknowledgement; re-notify resumes after it', () => {
    const acked = acknowledge(run(['MAJOR'], on('1', '2')).state, { by: 'bob' }, 0)!;
    const r = run(['MAJOR', 'MINOR', 'DOWN', 'DOWN', 'DOWN'], on('1', '2'), acked);
    assert.deepEqual(r.alerts, ['2:problem:DOWN:change', '4:problem:DOWN:renotify']);
    assert.equal(r.state?.ack, undefined);
  });

  it('a recovery of an acknowledged problem is sent and clears it; ERROR → DOWN is not worse', () => {
    const acked = acknowledge(run(['ERROR'], on()).state, { by: 'c' }, 0)!;
    const r = run(['DOWN', 'EXCEPTION', 'OK'], on(), acked);
    assert.deepEqual(r.alerts, ['2:recovery:OK:recovery']);
    assert.equal(r.state?.ack, undefined);
    assert.equal(r.state?.alertedStatus, undefined);
    assert.deepEqual(
      [isWorse('CRITICAL', 'MAJOR'), isWorse('DOWN', 'ERROR'), isWorse('MINOR', 'MAJOR'), isWorse('DOWN', 'DOWN')],
      [true, false, false, false],
    );
  });

  it('acknowledge needs an open problem; unacknowledge needs an acknowledgement', () => {
    assert.equal(acknowledge(undefined, { by: 'a' }, 0), undefined);
    assert.equal(acknowledge(run(['DOWN'], { notifyStatus: 'off' }).state, { by: 'a' }, 0), undefined);
    const open = run(['DOWN'], on()).state;
    assert.equal(unacknowledge(open), undefined);
    const back = unacknowledge(acknowledge(open, { by: 'a' }, 0));
    assert.deepEqual(back, open);
  });

  it('a state persisted before acknowledgements existed (no openedMs, no ack) still loads and recovers', () => {
    const old: AlertState = { lastStatus: 'DOWN', failCount: 1, alertedStatus: 'DOWN', lastAlertMs: 5 };
    assert.deepEqual(run(['DOWN', 'OK'], on(), old).alerts, ['1:recovery:OK:recovery']);
    assert.equal(acknowledge(old, { by: 'a' }, 9)?.ack?.status, 'DOWN');
  });
});
