/**
 * npm run bench:browser [-- --runs 50 --browser chromium]
 * A 5-step transaction (goto, fill, fill, click, assertText) against the local site, run N times with the browser
 * reused across runs (fresh context per run) and N times with a fresh browser per run, interleaved in one process
 * (the machine is shared: alternating runs makes both modes see the same load). Between runs the bench waits, untimed,
 * until the mode's background work is done (a context or browser closing, the next spare context being prepared), as
 * it is between the runs of a monitor with an interval.
 * Prints p50/p99 wall time per run and the browsers' RSS (sampled every 100 ms); the last line is JSON.
 */
import { startBrowserSite } from '../test/support/browser-site.fixture.js';
import { createExecType } from '../src/monitor/monitor-types/exec.js';
import { makeContext } from '../src/monitor/monitor-types/exec/testing.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return (i > 0 && process.argv[i + 1]) || dflt;
}

const RUNS = Number(arg('runs', '50'));
const BROWSER = arg('browser', 'chromium');

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}
const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;

interface Mode {
  label: string;
  exec: ReturnType<typeof createExecType>;
  durations: number[];
  rssAfterRun: number[];
  rssMax: number;
}

function makeMode(label: string, maxRunsPerBrowser: number): Mode {
  return {
    label,
    exec: createExecType({ poolOptions: { maxRunsPerBrowser } }),
    durations: [],
    rssAfterRun: [],
    rssMax: 0,
  };
}

async function runOnce(m: Mode, steps: string): Promise<number> {
  const ctx = makeContext({ timeoutMs: 60_000, secrets: { pw: 'correct horse battery' } });
  const t0 = performance.now();
  const r = await m.exec.type.check({ name: 'bench', steps, browser: BROWSER, artifacts: 'never' }, ctx);
  const ms = performance.now() - t0;
  ctx.dispose();
  // Untimed: let this mode's background work (context/browser close, the next spare) finish so that it never
  // overlaps the other mode's timed run.
  await m.exec.settled();
  if (r.outcome !== 'up') throw new Error(`${m.label}: run failed: ${r.message}`);
  return ms;
}

async function finish(m: Mode) {
  const launches = m.exec.pool.launchCount;
  await m.exec.close();
  const out = {
    p50Ms: Math.round(pct(m.durations, 50)),
    p99Ms: Math.round(pct(m.durations, 99)),
    rssMbMax: mb(m.rssMax),
    rssMbFirst: mb(m.rssAfterRun[0] ?? 0),
    rssMbLast: mb(m.rssAfterRun[m.rssAfterRun.length - 1] ?? 0),
    launches,
  };
  console.log(
    `${m.label.padEnd(6)} p50 ${out.p50Ms} ms  p99 ${out.p99Ms} ms  RSS max ${out.rssMbMax} MB (after run 1: ${out.rssMbFirst} MB, after run ${RUNS}: ${out.rssMbLast} MB)  launches ${launches}`,
  );
  return out;
}

/** Runs both modes interleaved (reuse, fresh, reuse, ...) so that both see the same machine load. */
async function compare(url: string) {
  const steps = JSON.stringify([
    { action: 'goto', url: `${url}/login` },
    { action: 'fill', selector: '#username', value: 'alice' },
    { action: 'fill', selector: '#password', value: '{{secret:pw}}' },
    { action: 'click', selector: 'role=button[name="Sign in"]' },
    { action: 'assertText', selector: 'h1', text: 'Dashboard' },
  ]);
  const reuse = makeMode('reuse', 100_000);
  const fresh = makeMode('fresh', 1);
  const sampler = setInterval(() => {
    reuse.rssMax = Math.max(reuse.rssMax, reuse.exec.pool.rssBytes());
    fresh.rssMax = Math.max(fresh.rssMax, fresh.exec.pool.rssBytes());
  }, 100);
  await runOnce(reuse, steps); // warm-up: first launch, module loading
  await runOnce(fresh, steps);
  for (let i = 0; i < RUNS; i++) {
    for (const m of [reuse, fresh]) {
      m.durations.push(await runOnce(m, steps));
      m.rssAfterRun.push(m.exec.pool.rssBytes());
    }
  }
  clearInterval(sampler);
  return { reuse: await finish(reuse), fresh: await finish(fresh) };
}

async function main() {
  const site = await startBrowserSite({ password: 'correct horse battery' });
  console.log(`bench:browser  ${BROWSER}, 5-step transaction, ${RUNS} runs per mode (+1 warm-up), modes interleaved`);
  try {
    const { reuse, fresh } = await compare(site.url);
    const speedup = Math.round((fresh.p50Ms / reuse.p50Ms) * 10) / 10;
    console.log(`reuse is ${speedup}x faster per run at p50 (target >= 3x): ${speedup >= 3 ? 'met' : 'NOT met'}`);
    console.log(
      JSON.stringify({
        browser: BROWSER,
        runs: RUNS,
        steps: 5,
        reuseP50Ms: reuse.p50Ms,
        reuseP99Ms: reuse.p99Ms,
        freshP50Ms: fresh.p50Ms,
        freshP99Ms: fresh.p99Ms,
        speedupP50: speedup,
        reuseRssMbMax: reuse.rssMbMax,
        reuseRssMbAfterFirst: reuse.rssMbFirst,
        reuseRssMbAfterLast: reuse.rssMbLast,
        freshRssMbMax: fresh.rssMbMax,
        reuseLaunches: reuse.launches,
        freshLaunches: fresh.launches,
      }),
    );
  } finally {
    await site.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
