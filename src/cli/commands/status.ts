/**
 * `sentinel status` (counts by status, failing monitors first; exit 3 when any monitor that is on is not OK, so a
 * script or a cron job can act on it) and `sentinel report NAME --range 7d` (timeline shares and trend).
 */
import { CliError, EXIT } from '../client.js';
import { str, type Command } from '../command.js';
import { enc, findMonitor, listMonitors } from '../monitors-api.js';
import { emit, table } from '../output.js';
import { session } from '../session.js';
import { MONITOR_HEADERS, monitorRows } from './monitors.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, WEEK_MS } from '../../core/time.js';

/** Worst first; OK and DOWNTIME (planned) are not problems; a monitor without a result yet is PENDING. */
const RANK = ['EXCEPTION', 'ERROR', 'DOWN', 'CRITICAL', 'MAJOR', 'MINOR', 'PENDING', 'DOWNTIME', 'OK'];
const isProblem = (s: string) => !['OK', 'DOWNTIME', 'PENDING'].includes(s);

export const status: Command = {
  name: 'status',
  summary: 'Counts by status and the failing monitors, worst first (exit 3 when any is failing)',
  usage: 'status [--tag X] [--type T]',
  examples: ['sentinel status', 'sentinel status --tag prod --json', 'sentinel status || page-the-on-call'],
  options: { tag: { type: 'string' }, type: { type: 'string' } },
  async run(ctx) {
    const client = await session(ctx.env, 'monitor');
    try {
      const all = await listMonitors(client, { tag: str(ctx.values, 'tag'), type: str(ctx.values, 'type') });
      const on = all.filter((m) => m.state !== 'off');
      const st = (m: (typeof on)[number]) => m.last?.status ?? 'PENDING';
      const counts: Record<string, number> = {};
      for (const m of on) counts[st(m)] = (counts[st(m)] ?? 0) + 1;
      const failing = on.filter((m) => isProblem(st(m))).sort((a, b) => RANK.indexOf(st(a)) - RANK.indexOf(st(b)));
      const data = { total: all.length, off: all.length - on.length, counts, failing };
      emit(ctx.out, data, () => {
        const line = RANK.filter((s) => counts[s]).map((s) => `${s} ${counts[s]}`);
        const head = `${on.length} monitors on (${data.off} off): ${line.join(', ') || 'no results yet'}`;
        return failing.length ? `${head}\n\n${table(MONITOR_HEADERS, monitorRows(failing))}` : head;
      });
      return failing.length ? EXIT.problems : EXIT.ok;
    } finally {
      client.close();
    }
  },
};

const RANGE_UNITS: Record<string, number> = { m: MINUTE_MS, h: HOUR_MS, d: DAY_MS, w: WEEK_MS };

export function parseRange(v: string): number {
  const m = /^(\d{1,6})([mhdw])$/.exec(v);
  if (!m) throw new CliError(`--range must look like 30m, 24h, 7d or 4w, got "${v}"`, EXIT.usage);
  return Number(m[1]) * RANGE_UNITS[m[2]!]!;
}

interface Timeline {
  sharePct: Record<string, number>;
  coveredMs: number;
}
type Period = { availabilityPct: number | null; avgResponseMs: number | null; p95ResponseMs: number | null };
type Trend = Record<'24h' | '7d' | '4w', Period & { change: Period }>;

export const report: Command = {
  name: 'report',
  summary: "A monitor's share of time per status over a range, and its 24h/7d/4w trend",
  usage: 'report NAME [--range 7d]',
  examples: ['sentinel report web-home', 'sentinel report db-main --range 24h --json'],
  options: { range: { type: 'string' } },
  async run(ctx) {
    const [name] = ctx.positionals;
    if (!name) throw new CliError('report needs a monitor name', EXIT.usage);
    const rangeMs = parseRange(str(ctx.values, 'range') ?? '7d');
    const client = await session(ctx.env, 'monitor');
    try {
      const m = await findMonitor(client, name);
      const end = Date.now();
      const tl = await client.call<Timeline>(
        'POST',
        `/timelineGraph/${enc(m.type)}/${enc(name)}/${end - rangeMs}/${end}`,
      );
      const tr = await client.call<Trend>('GET', `/getTrend/${enc(m.type)}/${enc(name)}`);
      emit(ctx.out, { name, type: m.type, rangeMs, timeline: tl, trend: tr }, () => {
        const shares = Object.entries(tl.sharePct).map(([s, p]) => `${s} ${p}%`);
        const fmt = (v: number | null, unit: string) => (v === null ? '-' : `${v}${unit}`);
        const rows = (['24h', '7d', '4w'] as const).map((k) => [
          k,
          fmt(tr[k].availabilityPct, '%'),
          fmt(tr[k].change.availabilityPct, ''),
          fmt(tr[k].avgResponseMs, ' ms'),
          fmt(tr[k].p95ResponseMs, ' ms'),
        ]);
        return [
          `${name} (${m.type}), last ${str(ctx.values, 'range') ?? '7d'}: ${shares.join(', ') || 'no results'}`,
          '',
          table(['PERIOD', 'AVAILABILITY', 'CHANGE', 'AVG', 'P95'], rows),
        ].join('\n');
      });
      return EXIT.ok;
    } finally {
      client.close();
    }
  },
};
