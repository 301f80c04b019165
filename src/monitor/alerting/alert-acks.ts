/**
 * Open problems and acknowledgements through the API. Alone, from the states in memory; in a cluster from the store,
 * except the monitors whose shard lease is held here (their states in memory are as fresh or fresher).
 * `acknowledge` marks a monitor's open problem as acknowledged (no re-notify, no alert until the status gets worse or
 * recovers: alert-policy.ts) and tells the channels that take acknowledgements, through the same queue.
 */
import type { Alert } from '../../core/notify/channel.js';
import { AppError } from '../../core/errors.js';
import { type AlertState, acknowledge, unacknowledge } from './alert-policy.js';
import { problemView, toAlert } from './alert-format.js';
import type { HeldAt } from './alert-shards.js';
import { type AlertingContext, toQueue } from './alerting-context.js';
import { type AlertMonitor, type ProblemView, STATE_BUCKET } from './alerting-types.js';

function monitorFor(cx: AlertingContext, name: string): AlertMonitor {
  const m = cx.deps.getMonitor?.(name);
  if (!m) throw AppError.notFound(`monitor ${name} not found`);
  return m;
}

/** A monitor's alert state; in a cluster the store's unless its lease is held here (then `at` is set). */
async function current(cx: AlertingContext, m: AlertMonitor): Promise<{ state?: AlertState; at?: HeldAt }> {
  const at = cx.shards?.heldAt(m.name, m.probe);
  if (!cx.shards || at) return { state: cx.states.get(m.name), at };
  return { state: await cx.deps.store.bucket(STATE_BUCKET).get<AlertState>(m.name) };
}

export async function problems(cx: AlertingContext, monitor?: string): Promise<ProblemView[]> {
  const { shards, states, deps } = cx;
  // Cluster: every member's monitors, from the store (the held ones' states here are as fresh or fresher).
  let all: Map<string, AlertState> = states;
  if (shards && monitor !== undefined) {
    const st = states.get(monitor) ?? (await deps.store.bucket(STATE_BUCKET).get<AlertState>(monitor));
    all = new Map(st ? [[monitor, st]] : []);
  } else if (shards) {
    all = new Map();
    for await (const e of deps.store.bucket(STATE_BUCKET).range<AlertState>()) all.set(String(e.key), e.value);
    for (const [name, st] of states) all.set(name, st);
  }
  const out: ProblemView[] = [];
  for (const [name, st] of all)
    if (st.alertedStatus !== undefined && (monitor === undefined || monitor === name)) out.push(problemView(name, st));
  return out.sort((a, b) => (a.openedMs ?? a.lastAlertMs ?? 0) - (b.openedMs ?? b.lastAlertMs ?? 0));
}

export async function acknowledgeProblem(
  cx: AlertingContext,
  name: string,
  ack: { by: string; note?: string },
): Promise<ProblemView> {
  const m = monitorFor(cx, name);
  const { state, at } = await current(cx, m);
  const next = acknowledge(state, ack, cx.now());
  if (!next) throw AppError.conflict(`monitor ${name} has no open problem to acknowledge`);
  if (!cx.shards || at) cx.states.set(name, next);
  const ops = [{ type: 'put' as const, bucket: STATE_BUCKET, key: name, value: next }];
  const base: Alert = {
    ...toAlert(m, 'acknowledge', next.alertedStatus!, undefined, cx.now()),
    acknowledgement: {
      by: next.ack!.by,
      atMs: next.ack!.atMs,
      ...(next.ack!.note ? { note: next.ack!.note } : {}),
    },
  };
  const list = toQueue(cx, m, base);
  cx.log.info({ monitor: name, by: ack.by, channels: list.map((x) => x.channel) }, 'alert acknowledged');
  await cx.queue.enqueueWith(list, ops, at?.fence);
  return problemView(name, next);
}

export async function unacknowledgeProblem(cx: AlertingContext, name: string): Promise<ProblemView> {
  const { state, at } = await current(cx, monitorFor(cx, name));
  const next = unacknowledge(state);
  if (!next) throw AppError.conflict(`monitor ${name} has no acknowledged problem`);
  if (!cx.shards || at) cx.states.set(name, next);
  await cx.writes.write([{ type: 'put', bucket: STATE_BUCKET, key: name, value: next }], at?.fence);
  cx.log.info({ monitor: name }, 'alert acknowledgement removed');
  return problemView(name, next);
}
