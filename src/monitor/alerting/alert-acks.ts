/**
 * Open problems and acknowledgements through the API. Alone, from the states in memory; in a cluster from the store,
 * except the monitors whose shard lease is held here (their states in memory are as fresh or fresher).
 * `acknowledge` marks a monitor's open problem as acknowledged (no re-notify, no alert until the status gets worse or
 * recovers: alert-policy.ts) and tells the channels that take acknowledgements, through the same queue. In a cluster
 * an acknowledgement (or its removal) is also an acknowledgement record (ack-records.ts), and a member not holding the
 * monitor's lease writes only that: the holder applies it, so its own state writes never overwrite it.
 */
import type { Alert } from '../../core/notify/channel.js';
import type { BatchOp } from '../../core/storage/kv-store.js';
import { ACK_BUCKET, type AckRecord, ackRecordOf, applyAckRecord } from './ack-records.js';
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
  return { state: await storedState(cx, m.name) };
}

/** Cluster: a monitor's stored state with its acknowledgement record applied. */
async function storedState(cx: AlertingContext, name: string): Promise<AlertState | undefined> {
  const [state] = await cx.deps.store.bucket(STATE_BUCKET).getMany<AlertState>([name]);
  const [rec] = await cx.deps.store.bucket(ACK_BUCKET).getMany<AckRecord>([name]);
  return applyAckRecord(state, rec);
}

/**
 * The writes of an acknowledgement or its removal: alone or holding the lease the state (kept in memory too); in a
 * cluster the acknowledgement record as well — all a member not holding the lease writes.
 */
function ackOps(cx: AlertingContext, name: string, next: AlertState, at: HeldAt | undefined): BatchOp[] {
  const ops: BatchOp[] = [];
  if (!cx.shards || at) {
    cx.states.set(name, next);
    ops.push({ type: 'put', bucket: STATE_BUCKET, key: name, value: next });
  }
  if (cx.shards) ops.push({ type: 'put', bucket: ACK_BUCKET, key: name, value: ackRecordOf(next) });
  return ops;
}

export async function problems(cx: AlertingContext, monitor?: string): Promise<ProblemView[]> {
  const { shards, states, deps } = cx;
  // Cluster: every member's monitors, from the store (the held ones' states here are as fresh or fresher).
  let all: Map<string, AlertState> = states;
  // An acknowledgement record not applied yet (the holder follows it) shows at once.
  if (shards && monitor !== undefined) {
    const [rec] = await deps.store.bucket(ACK_BUCKET).getMany<AckRecord>([monitor]);
    const st = applyAckRecord(
      states.get(monitor) ?? (await deps.store.bucket(STATE_BUCKET).get<AlertState>(monitor)),
      rec,
    );
    all = new Map(st ? [[monitor, st]] : []);
  } else if (shards) {
    all = new Map();
    for await (const e of deps.store.bucket(STATE_BUCKET).range<AlertState>()) all.set(String(e.key), e.value);
    for (const [name, st] of states) all.set(name, st);
    for await (const e of deps.store.bucket(ACK_BUCKET).range<AckRecord>()) {
      const st = all.get(String(e.key));
      if (st) all.set(String(e.key), applyAckRecord(st, e.value)!);
    }
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
  const ops = ackOps(cx, name, next, at);
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
  await cx.writes.write(ackOps(cx, name, next, at), at?.fence);
  cx.log.info({ monitor: name }, 'alert acknowledgement removed');
  return problemView(name, next);
}
