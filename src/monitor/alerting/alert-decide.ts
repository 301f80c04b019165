/**
 * Alerting's decision per result: the alert policy (alert-policy.ts) judges the monitor's new status from its state;
 * a changed state is written and the alerts it decides are queued, one per target channel, in one atomic batch (in a
 * cluster under the shard lease's fence). A problem alert waits for its enrichment's diagnosis, and the monitor's
 * later writes and alerts queue behind it, so their order holds.
 */
import type { AlertState } from './alert-policy.js';
import { evaluate, policyFor, sameState } from './alert-policy.js';
import { toAlert } from './alert-format.js';
import type { HeldAt } from './alert-shards.js';
import { type AlertingContext, toQueue } from './alerting-context.js';
import { type AlertMonitor, type AlertingService, STATE_BUCKET } from './alerting-types.js';

export type ResultInfo = Parameters<AlertingService['onResult']>[2];

/** Runs `go` now, or (a diagnosis to wait for, or an earlier write of the monitor still waiting) after them. */
export function afterWait(
  cx: AlertingContext,
  name: string,
  ready: Promise<string | undefined> | undefined,
  go: (d?: string) => unknown,
): void {
  const prev = cx.waiting.get(name);
  if (!ready && !prev) return void go();
  const safe = (d?: string) => {
    try {
      go(d);
    } catch (err) {
      cx.log.error({ err, monitor: name }, 'alerting: delayed alert failed');
    }
  };
  const p: Promise<void> = (prev ?? Promise.resolve())
    .then(() => ready)
    .then(safe, () => safe())
    .finally(() => {
      if (cx.waiting.get(name) === p) cx.waiting.delete(name);
    });
  cx.waiting.set(name, p);
}

function judge(cx: AlertingContext, monitor: AlertMonitor, status: string, result: ResultInfo, t: number) {
  const prev: AlertState | undefined = cx.states.get(monitor.name);
  const policy = policyFor({
    notifyStatus: monitor.notifyStatus,
    notifyAfter: monitor.notifyAfter,
    renotifyMinutes: monitor.renotifyMinutes,
    emailOnF: monitor.emailOnF,
  });
  let d = evaluate(prev, status, policy, t);
  if (d.alert?.kind === 'problem' && result?.suppressedBy) {
    d = evaluate(prev, status, { ...policy, notify: false }, t);
    cx.log.info(
      { monitor: monitor.name, status, parent: result.suppressedBy },
      'alert suppressed: a parent is failing',
    );
  }
  return { prev, d };
}

export function decide(
  cx: AlertingContext,
  monitor: AlertMonitor,
  status: string,
  result: ResultInfo,
  t: number,
  at?: HeldAt,
): void {
  try {
    const { prev, d } = judge(cx, monitor, status, result, t);
    const same = sameState(prev, d.state);
    // An unchanged state keeps its object: a steady monitor makes no long-lived garbage per result.
    if (!same) cx.states.set(monitor.name, d.state);
    const ops = same ? [] : [{ type: 'put' as const, bucket: STATE_BUCKET, key: monitor.name, value: d.state }];
    const fence = at?.fence;
    if (!d.alert) {
      if (ops.length) afterWait(cx, monitor.name, undefined, () => cx.writes.write(ops, fence).catch(() => undefined));
      return;
    }
    const decided = d.alert;
    const ready = decided.kind === 'problem' ? result?.diagnosis : undefined;
    afterWait(cx, monitor.name, ready, (diagnosis) => {
      // A lease lost while the diagnosis was awaited: nothing is written; the next holder judges from the store.
      if (at && !cx.shards!.holds(at)) return void cx.log.warn({ monitor: monitor.name }, 'alert dropped: lease lost');
      const base = toAlert(monitor, decided.kind, decided.status, decided.previousStatus, t, {
        message: result?.message,
        responseTimeMs: result?.responseTimeMs,
        diagnosis,
      });
      const list = toQueue(cx, monitor, base);
      const channels = list.map((x) => x.channel);
      const logged = { monitor: monitor.name, kind: decided.kind, status, reason: decided.reason, channels };
      cx.log.info({ ...logged, ...(diagnosis ? { diagnosis } : {}) }, 'alert');
      cx.queue.enqueueWith(list, ops, fence).catch(() => undefined);
    });
  } catch (err) {
    cx.log.error({ err, monitor: monitor.name }, 'alerting: onResult failed');
  }
}

/** A held monitor's state changed outside a result (an acknowledgement record): written after its waiting writes. */
export function persistState(cx: AlertingContext, name: string, state: AlertState, at: HeldAt): void {
  const ops = [{ type: 'put' as const, bucket: STATE_BUCKET, key: name, value: state }];
  afterWait(cx, name, undefined, () => cx.writes.write(ops, at.fence).catch(() => undefined));
}
