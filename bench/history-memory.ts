/**
 * npm run bench:history-memory — what the results history holds in memory per monitor: 50,000 url series
 * (BENCH_SERIES) at 1MIN, heap + ArrayBuffer memory after a full GC: a first row each, the rest of that hour (59 more
 * rows), then — once that hour is compacted — a whole second hour (a steady series' buffer is then sized from its
 * previous hour). Baseline in the same run: 59 rows per series kept as row objects in arrays (what the history held
 * before its rows were encoded, row-buffer.ts). The last line is one JSON object of the figures.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { openLmdbStore } from '../src/core/storage/lmdb-store.js';
import { createHistoryService } from '../src/monitor/history/history.service.js';
import type { RawRow } from '../src/monitor/history/result-codec.js';
import type { ResultRecord } from '../src/monitor/history/types.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const N = Number(process.env.BENCH_SERIES ?? 50_000);
const MIN = 60_000;
const H = Date.UTC(2026, 10, 22, 4);
const us = (ms: number): number => Math.round(ms * 1000) / 1000;
const memB = (): number => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** A url check's result as the runner hands it to history (timings rounded to µs as the probe does). */
function urlRecord(ts: number): ResultRecord {
  return {
    ts,
    status: 'OK',
    responseTimeMs: us(1 + Math.random()),
    message: 'HTTP 200',
    details: { finalUrl: 'http://127.0.0.1:40000/ok', redirects: [] },
    metrics: {
      dnsMs: 0,
      connectMs: us(0.3 + Math.random() / 10),
      ttfbMs: us(0.9 + Math.random() / 10),
      totalMs: us(1 + Math.random()),
      redirectCount: 0,
      statusCode: 200,
      bodyBytes: 8,
    },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-hist-mem-'));
  const store = await openLmdbStore({ path: join(dir, 'db'), noSync: true });
  let now = H + 59 * MIN + 30_000;
  const h = await createHistoryService({
    store,
    log: pino({ level: 'silent' }),
    clock: () => now,
    retentionHours: () => 24,
    flushIntervalMs: 3_600_000,
    maxPendingRows: 1e9,
  });
  const names = Array.from({ length: N }, (_, i) => `bench-${i}`);
  const m0 = memB();
  for (let i = 0; i < N; i++) h.append('url', names[i]!, urlRecord(H + 1000 + (i % 48_000)));
  await h.flush();
  const m1 = memB();
  for (let min = 1; min < 60; min++) {
    for (let i = 0; i < N; i++) h.append('url', names[i]!, urlRecord(H + min * MIN + (i % 48_000)));
    if (min % 5 === 0) await h.flush();
  }
  await h.flush();
  const m60 = memB();
  now = H + 60 * MIN + 30_000; // the next hour: the first one is compacted, 1,000 series per flush
  for (let i = 0; i < Math.ceil(N / 1000) + 2; i++) await h.flush();
  const mIdle = memB();
  for (let min = 0; min < 60; min++) {
    for (let i = 0; i < N; i++) h.append('url', names[i]!, urlRecord(H + 60 * MIN + min * MIN + (i % 48_000)));
    if (min % 5 === 0) await h.flush();
  }
  await h.flush();
  const m120 = memB();
  await h.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });

  // Baseline: 59 rows per series as objects (RawRow + its metrics object) in one array per series.
  const b0 = memB();
  const kept: RawRow[][] = [];
  for (let i = 0; i < N; i++) {
    const rows: RawRow[] = [];
    for (let min = 1; min < 60; min++) {
      const r = urlRecord(H + min * MIN + (i % 48_000));
      rows.push({ ts: r.ts, code: 0, resp: Math.fround(r.responseTimeMs), extra: false, metrics: r.metrics });
    }
    kept.push(rows);
  }
  const b1 = memB();
  const figures = {
    series: N,
    first_row_bytes_per_monitor: Math.round((m1 - m0) / N),
    hour_rows_bytes_per_monitor: Math.round((m60 - m1) / N),
    hour_total_bytes_per_monitor: Math.round((m60 - m0) / N),
    second_hour_rows_bytes_per_monitor: Math.round((m120 - mIdle) / N),
    second_hour_total_bytes_per_monitor: Math.round((m120 - m0) / N),
    baseline_rows_as_objects_bytes_per_monitor: Math.round((b1 - b0) / N),
    ratio_vs_objects: Math.round(((b1 - b0) / (m60 - m1)) * 10) / 10,
  };
  console.log(
    `history memory per monitor: first row ${figures.first_row_bytes_per_monitor} B, the rest of the hour (59 url rows) ${figures.hour_rows_bytes_per_monitor} B (total ${figures.hour_total_bytes_per_monitor} B); a whole second hour's 60 rows ${figures.second_hour_rows_bytes_per_monitor} B (total ${figures.second_hour_total_bytes_per_monitor} B); 59 rows as objects ${figures.baseline_rows_as_objects_bytes_per_monitor} B (${figures.ratio_vs_objects}× more); kept ${kept.length}`,
  );
  console.log(JSON.stringify(figures));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
