/**
 * The newest results of one series (GET details' `recent`, /monitor/run history): stored chunks read backwards
 * merged with the rows still in memory, message/details rebuilt from the extras.
 */
import { decodeChunk, type RawRow } from './result-codec.js';
import type { Extra, SeriesRepo } from './series.repo.js';
import { mergeRows, type MemChunk, type SeriesState } from './series-state.js';
import { originFields, type OriginRegistry } from './origins.js';
import { STATUSES, hourStart, type ResultRecord } from './types.js';
import { HOUR_MS } from '../../core/time.js';

/** Newest-first raw results of one series with message/details rebuilt from the extras, and each one's origin. */
export async function recent(
  repo: SeriesRepo,
  s: SeriesState | undefined,
  n: number,
  origins?: OriginRegistry,
): Promise<ResultRecord[]> {
  if (!s || s.lastTs === -Infinity) return [];
  const want = Math.max(0, Math.min(1000, Math.floor(n)));
  const chunks = new Map<number, { rows: RawRow[]; mem?: MemChunk }>();
  let hi = hourStart(s.lastTs);
  for (const c of s.chunks) hi = Math.max(hi, c.hour);
  let have = 0;
  for (let more = true; more && have < want; ) {
    const stored = await repo.chunksBackward(s.db, s.name, hi, 8);
    more = stored.length === 8;
    const low = more ? stored[stored.length - 1]!.t : -Infinity;
    for (const { t, v } of stored) chunks.set(t, { rows: decodeChunk(t, v) });
    for (const c of s.chunks) {
      if (c.hour < low || c.hour > hi) continue;
      const prev = chunks.get(c.hour);
      chunks.set(c.hour, { rows: c.needsMerge && prev ? mergeRows(prev.rows, c.buf.rows()) : c.buf.rows(), mem: c });
    }
    have = 0;
    for (const c of chunks.values()) have += c.rows.length;
    hi = low - 1;
  }
  const hours = [...chunks.keys()].sort((a, b) => b - a);
  const picked: Array<{ hour: number; rows: RawRow[]; mem?: MemChunk }> = [];
  let count = 0;
  for (const h of hours) {
    if (count >= want) break;
    picked.push({ hour: h, ...chunks.get(h)! });
    count += chunks.get(h)!.rows.length;
  }
  if (picked.length === 0) return [];
  const lowHour = picked[picked.length - 1]!.hour;
  // Extras not yet flushed, taken before the store read: one that is no longer pending was written before now.
  const extras = new Map<number, Extra>();
  for (const { mem } of picked) for (const [t, e] of mem?.pendingExtras ?? []) extras.set(t, e);
  for (const { t, v } of await repo.extras(s.db, s.name, lowHour, picked[0]!.hour + HOUR_MS))
    if (!extras.has(t)) extras.set(t, v);
  await origins?.resolve(picked.flatMap(({ rows }) => rows.map((r) => r.origin)));
  const out: ResultRecord[] = [];
  for (const { rows } of picked) {
    let cur: Extra = {};
    const recs: ResultRecord[] = rows.map((r) => {
      if (r.extra) cur = extras.get(r.ts) ?? {};
      const rec: ResultRecord = { ts: r.ts, status: STATUSES[r.code]!, responseTimeMs: r.resp };
      if (r.metrics) rec.metrics = r.metrics;
      if (cur.m !== undefined) rec.message = cur.m;
      if (cur.d !== undefined) rec.details = cur.d;
      return r.origin ? Object.assign(rec, originFields(origins?.get(r.origin))) : rec;
    });
    out.push(...recs.reverse());
  }
  return out.slice(0, want);
}
