/**
 * Runs Debian's fping for many targets at once (`fping -C <count> -q ... -- t1 t2 ...`) and parses its per-target
 * RTT lines. One process serves a whole batch of due ping monitors; arguments go through execFile-style argv (spawn,
 * no shell). Targets are validated by the caller (see isPingTarget) so none can be taken for an option; `--` ends
 * the options anyway.
 *
 * fping -C output (stderr), one line per target, in target order, "-" for a lost echo:
 *   127.0.0.1 : 0.031 0.045 -
 * A target fping cannot resolve gets no line (and "name: Name or service not known").
 */
import { spawn } from 'node:child_process';
import { isIP } from 'node:net';

export interface PingStats {
  target: string;
  sent: number;
  received: number;
  lossPct: number;
  minMs?: number;
  avgMs?: number;
  maxMs?: number;
  rttsMs: (number | null)[];
}

export interface FpingRun {
  /** Stats by target; a target missing here got no line from fping (unresolvable, or fping was stopped first). */
  stats: Map<string, PingStats>;
  /** fping's non-result lines (name errors, send errors), for messages. */
  notes: string[];
  exitCode: number | null;
  aborted: boolean;
}

export interface FpingOptions {
  /** argv prefix that runs fping (default ['fping']); tests may run it inside a network namespace. */
  command?: readonly string[];
  count: number;
  /** Time between echoes to the same target (-p). */
  periodMs: number;
  /** Wait for one reply (-t). */
  perPingTimeoutMs: number;
  /** Time between echoes to different targets (-i). */
  intervalMs: number;
  signal?: AbortSignal;
}

const HOSTNAME_RE =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;

/** An IPv4/IPv6 literal or a DNS hostname; never starts with '-'. */
export function isPingTarget(v: string): boolean {
  return isIP(v) !== 0 || HOSTNAME_RE.test(v);
}

/** Parses fping -C output lines into stats by target. Lines that are not result lines go to `notes`. */
export function parseFpingOutput(text: string): { stats: Map<string, PingStats>; notes: string[] } {
  const stats = new Map<string, PingStats>();
  const notes: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const m = /^(\S+)\s+:\s+((?:[-\d.]+\s*)+)$/.exec(line);
    if (!m) {
      notes.push(line);
      continue;
    }
    const rttsMs = m[2]!
      .trim()
      .split(/\s+/)
      .map((s) => (s === '-' ? null : Number(s)));
    if (rttsMs.some((v) => v !== null && !Number.isFinite(v))) {
      notes.push(line);
      continue;
    }
    stats.set(m[1]!, summarise(m[1]!, rttsMs));
  }
  return { stats, notes };
}

export function summarise(target: string, rttsMs: (number | null)[]): PingStats {
  const got = rttsMs.filter((v): v is number => v !== null);
  const sent = rttsMs.length;
  const s: PingStats = {
    target,
    sent,
    received: got.length,
    lossPct: sent === 0 ? 100 : Math.round(((sent - got.length) / sent) * 1000) / 10,
    rttsMs,
  };
  if (got.length > 0) {
    s.minMs = Math.min(...got);
    s.maxMs = Math.max(...got);
    s.avgMs = Math.round((got.reduce((a, b) => a + b, 0) / got.length) * 1000) / 1000;
  }
  return s;
}

export function fpingArgs(targets: readonly string[], o: FpingOptions): string[] {
  return [
    '-C',
    String(o.count),
    '-q',
    '-p',
    String(Math.round(o.periodMs)),
    '-t',
    String(Math.round(o.perPingTimeoutMs)),
    '-i',
    String(Math.max(1, Math.round(o.intervalMs))),
    '-r',
    '0',
    '--',
    ...targets,
  ];
}

/** Runs one fping process for `targets` (deduplicated by the caller or not: duplicates share one line). On abort
 * fping gets SIGINT, which makes it print what it has so far; missing echoes then count as lost. */
export function runFping(targets: readonly string[], o: FpingOptions): Promise<FpingRun> {
  const unique = [...new Set(targets)];
  const [cmd, ...pre] = o.command ?? ['fping'];
  return new Promise((resolve) => {
    let out = '';
    let aborted = false;
    const child = spawn(cmd!, [...pre, ...fpingArgs(unique, o)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const onAbort = (): void => {
      aborted = true;
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 500).unref();
    };
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const finish = (exitCode: number | null, extraNote?: string): void => {
      o.signal?.removeEventListener('abort', onAbort);
      const parsed = parseFpingOutput(out);
      if (extraNote) parsed.notes.push(extraNote);
      resolve({ ...parsed, exitCode, aborted });
    };
    child.on('error', (e) => finish(null, `cannot run fping: ${e.message}`));
    child.on('close', (code) => finish(code));
  });
}

/** Splits targets into chunks of at most `size` and runs up to `parallel` fping processes at a time. */
export async function runFpingChunked(
  targets: readonly string[],
  o: FpingOptions,
  size = 256,
  parallel = 4,
): Promise<FpingRun> {
  const unique = [...new Set(targets)];
  const chunks: string[][] = [];
  for (let i = 0; i < unique.length; i += size) chunks.push(unique.slice(i, i + size));
  const merged: FpingRun = { stats: new Map(), notes: [], exitCode: 0, aborted: false };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chunks.length) {
      const run = await runFping(chunks[next++]!, o);
      for (const [k, v] of run.stats) merged.stats.set(k, v);
      merged.notes.push(...run.notes);
      merged.aborted ||= run.aborted;
      if (run.exitCode !== 0) merged.exitCode = run.exitCode;
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, chunks.length) }, worker));
  return merged;
}
