/**
 * npm run bench:browser [-- --runs 50 --browser chromium]
 * A 5-step transaction (goto, fill, fill, click, assertText) against the local site, run N times with the browser
 * reused across runs (fresh context per run) and N times with a fresh browser per run, in the same process.
 * Prints p50/p99 wall time per run and the browsers' RSS (sampled every 100 ms); the last line is JSON.
 */
import { startBrowserSite } from '../test/fixtures/browser-site.js';
import { createExecType } from '../src/monitor/monitor-types/exec.js';
import { makeContext } from '../src/monitor/monitor-types/exec/testing.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : dflt;
}

const RUNS = Number(arg('runs', '50'));
const BROWSER = arg('browser', 'chromium');

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}
const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;

async function mode(label: string, maxRunsPerBrowser: number, url: string) {
  const exec = createExecType({ poolOptions: { maxRunsPerBrowser } });
  const steps = JSON.stringify([
    { action: 'goto', url: `${url}/login` },
    { action: 'fill', selector: '#username', value: 'alice' },
    { action: 'fill', selector: '#password', value: '{{secret:pw}}' },
    { action: 'click', selector: 'role=button[name="Sign in"]' },
    { action: 'assertText', selector: 'h1', text: 'Dashboard' },
  ]);
  const durations: number[] = [];
  const rssAfterRun: number[] = [];
  let rssMax = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, exec.pool.rssBytes())), 100);
  const run = async () => {
    const ctx = makeContext({ timeoutMs: 60_000, secrets: { pw: 'correct horse battery' } });
    const t0 = performance.now();
    const r = await exec.type.check({ name: 'bench', steps, browser: BROWSER, artifacts: 'never' }, ctx);
    const ms = performance.now() - t0;
    ctx.dispose();
    if (r.outcome !== 'up') throw new Error(`${label}: run failed: ${r.message}`);
    return ms;
  };
  await run(); // warm-up (first launch; module loading)
  for (let i = 0; i < RUNS; i++) {
    durations.push(await run());
    rssAfterRun.push(exec.pool.rssBytes());
  }
  clearInterval(sampler);
  const launches = exec.pool.launchCount;
  await exec.close();
  const out = {
    p50Ms: Math.round(pct(durations, 50)),
    p99Ms: Math.round(pct(durations, 99)),
    rssMbMax: mb(rssMax),
    rssMbFirst: mb(rssAfterRun[0]),
    rssMbLast: mb(rssAfterRun[rssAfterRun.length - 1]),
    launches,
  };
  console.log(`${label.padEnd(8)} p50 ${out.p50Ms} ms  p99 ${out.p99Ms} ms  RSS max ${out.rssMbMax} MB (after run 1: ${out.rssMbFirst} MB, after run ${RUNS}: ${out.rssMbLast} MB)  launches ${launches}`);
  return out;
}

async function main() {
  const site = await startBrowserSite({ password: 'correct horse battery' });
  console.log(`bench:browser  ${BROWSER}, 5-step transaction, ${RUNS} runs per mode (+1 warm-up)`);
  try {
    const reuse = await mode('reuse', 100_000, site.url);
    const fresh = await mode('fresh', 1, site.url);
    const speedup = Math.round((fresh.p50Ms / reuse.p50Ms) * 10) / 10;
    console.log(`reuse is ${speedup}x faster per run at p50 (target >= 3x): ${speedup >= 3 ? 'met' : 'NOT met'}`);
    console.log(JSON.stringify({
      browser: BROWSER, runs: RUNS, steps: 5,
      reuseP50Ms: reuse.p50Ms, reuseP99Ms: reuse.p99Ms, freshP50Ms: fresh.p50Ms, freshP99Ms: fresh.p99Ms,
      speedupP50: speedup,
      reuseRssMbMax: reuse.rssMbMax, reuseRssMbAfterFirst: reuse.rssMbFirst, reuseRssMbAfterLast: reuse.rssMbLast,
      freshRssMbMax: fresh.rssMbMax, reuseLaunches: reuse.launches, freshLaunches: fresh.launches,
    }));
  } finally {
    await site.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
