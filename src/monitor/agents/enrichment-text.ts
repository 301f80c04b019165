/**
 * The one-line summary of an enrichment, as alerts (first line of every channel's message), the monitor page and the
 * log show it: "port 5432 on db-1: no process listening — postgres (pid 812) was listening 2 min ago",
 * "port 8080 on web-1: java (pid 4410, user app) listening, CPU 97 %, RSS 1.2 GB, started 3 h ago; host CPU 99 %,
 * memory 71 %, load 8.2".
 */
import type { Enrichment } from './enricher.service.js';

/** "12 s", "2 min", "3 h", "4 d". */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

function bytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GB`;
  if (n >= 1024 ** 2) return `${Math.round(n / 1024 ** 2)} MB`;
  return `${Math.round(n / 1024)} KB`;
}

const who = (name: string | undefined, pid: number | null) =>
  `${name ?? 'a process'}${pid !== null ? ` (pid ${pid})` : ''}`;

export function summarise(e: Enrichment, nowMs: number): string {
  const where = `port ${e.port} on ${e.host}`;
  if (e.error !== undefined) return `${where}: agent ${e.agent} gave no answer (${e.error.slice(0, 200)})`;
  const parts: string[] = [];
  if (!e.listening) {
    const before = e.previous
      ? ` — ${who(e.previous.name, e.previous.pid)} was listening ${ago(nowMs - e.previous.seenMs)} ago`
      : '';
    parts.push(`${where}: no process listening${before}`);
  } else {
    const p = e.process!;
    const facts = [...(p.pid !== null ? [`pid ${p.pid}`] : []), ...(p.user ? [`user ${p.user}`] : [])];
    let line = `${where}: ${p.name ?? 'a process'}${facts.length ? ` (${facts.join(', ')})` : ''} listening`;
    if (p.cpuPct !== undefined) line += `, CPU ${p.cpuPct} %`;
    if (p.rssBytes !== undefined) line += `, RSS ${bytes(p.rssBytes)}`;
    if (p.startTimeMs !== undefined) line += `, started ${ago(nowMs - p.startTimeMs)} ago`;
    if (p.restarted && e.previous) line += ` (restarted since last check: was ${who(e.previous.name, e.previous.pid)})`;
    parts.push(line);
  }
  if (e.hostLoad)
    parts.push(
      `host CPU ${Math.round(e.hostLoad.cpuPct)} %, memory ${Math.round(e.hostLoad.memUsedPct)} %, load ${e.hostLoad.load1}`,
    );
  return parts.join('; ');
}
