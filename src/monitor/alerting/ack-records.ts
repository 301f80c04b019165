/**
 * A cluster's acknowledgement records (bucket 'alert_acks', key = monitor name; decision 154). An acknowledgement or
 * its removal is written as its own record naming the open problem it is for (`openedMs`, `alertedStatus`), never by
 * a non-holder rewriting the alert state: the lease holder is the only writer of a monitor's state, so its writes can
 * no longer overwrite an acknowledgement made elsewhere in the same moment. The holder applies a record that names
 * its open problem (same `openedMs`; an acknowledgement only while the status is not worse than the one acknowledged,
 * as the policy would have ended it) on the change feed and when it wins the lease, and writes the state with it;
 * the API's views apply it too, so an acknowledgement shows at once on every member.
 */
import { type AckState, type AlertState, isWorse } from './alert-policy.js';

export const ACK_BUCKET = 'alert_acks';

export interface AckRecord {
  v: 1;
  openedMs?: number;
  alertedStatus: string;
  /** Absent: the acknowledgement was removed. */
  ack?: AckState;
}

/** The record of `s`'s acknowledgement (or its removal) for the problem `s` has open. */
export function ackRecordOf(s: AlertState): AckRecord {
  return {
    v: 1,
    ...(s.openedMs !== undefined ? { openedMs: s.openedMs } : {}),
    alertedStatus: s.alertedStatus!,
    ...(s.ack ? { ack: s.ack } : {}),
  };
}

/** `s` with the record's acknowledgement when the record names `s`'s open problem; `s` itself when nothing changes. */
export function applyAckRecord(s: AlertState | undefined, rec: AckRecord | undefined): AlertState | undefined {
  if (!s || !rec || rec.v !== 1 || s.alertedStatus === undefined) return s;
  if (rec.openedMs !== s.openedMs) return s;
  if (rec.ack && isWorse(s.alertedStatus, rec.ack.status)) return s;
  if (JSON.stringify(rec.ack) === JSON.stringify(s.ack)) return s;
  const { ack: _drop, ...rest } = s;
  return rec.ack ? { ...rest, ack: rec.ack } : rest;
}
