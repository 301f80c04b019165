/**
 * Status timeline of one monitor over [startMs, endMs): contiguous segments {from, to, status}, one per status run,
 * clipped to the range, and the share of covered time spent in each status.
 *
 * Semantics: a status holds from the result that set it until the next transition; the newest status holds until
 * min(endMs, now). Time before the monitor's first known result (or before the oldest kept transition, see
 * rollupRetentionDays) is not covered; shares are fractions of covered time (`coveredMs`), in percent.
 * Built from the transitions bucket (written only on status change), never from raw rows.
 */
import type { HistoryReads } from '../history/history.reads.js';
import { STATUSES, type DbName, type Status } from '../history/types.js';

export interface TimelineSegment {
  from: number;
  to: number;
  status: Status;
}

export interface Timeline {
  dbname: DbName;
  name: string;
  startTime: number;
  endTime: number;
  segments: TimelineSegment[];
  coveredMs: number;
  /** Percent of covered time per status (only statuses that occur). */
  sharePct: Partial<Record<Status, number>>;
}

export async function timelineGraph(
  h: HistoryReads,
  dbname: DbName,
  name: string,
  startMs: number,
  endMs: number,
): Promise<Timeline> {
  const trans = await h.transitions(dbname, name, startMs, endMs);
  const stop = Math.min(endMs, Math.max(h.now(), h.lastTs(dbname, name) ?? -Infinity));
  const segments: TimelineSegment[] = [];
  for (let i = 0; i < trans.length; i++) {
    const from = Math.max(startMs, trans[i]!.t);
    const to = Math.min(stop, i + 1 < trans.length ? trans[i + 1]!.t : stop);
    if (to <= from) continue;
    const status = STATUSES[trans[i]!.code] ?? 'EXCEPTION';
    const prev = segments[segments.length - 1];
    if (prev && prev.status === status && prev.to === from) prev.to = to;
    else segments.push({ from, to, status });
  }
  const byStatus = new Map<Status, number>();
  let coveredMs = 0;
  for (const s of segments) {
    coveredMs += s.to - s.from;
    byStatus.set(s.status, (byStatus.get(s.status) ?? 0) + (s.to - s.from));
  }
  const sharePct: Partial<Record<Status, number>> = {};
  for (const [status, ms] of byStatus) sharePct[status] = round((ms / coveredMs) * 100, 4);
  return { dbname, name, startTime: startMs, endTime: endMs, segments, coveredMs, sharePct };
}

export function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
