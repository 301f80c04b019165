/**
 * Alert delivery under a burst: 1,000 monitors turn DOWN in the same minute; Slack answers after 2 s (slow channel),
 * Teams at once. Figures: time until every alert is delivered (per channel), event-loop lateness meanwhile (a 10 ms
 * interval timer + monitorEventLoopDelay: a stand-in for check lateness) compared with a baseline run of the same
 * 1,000 results with alerts off, and memory. The receivers run in a child process so their work does not count.
 *
 * Run: npm run bench:alerts   (MONITORS=1000 SLOW_MS=2000 CONCURRENCY=16 BASELINE_S=15 override)
 * Last line: one JSON object of the figures.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createChannelRegistry } from '../src/core/notify/registry.js';
import { createSecretBox } from '../src/core/secrets/secret-box.js';
import { openLmdbStore } from '../src/core/storage/lmdb-store.js';
import { createAlertingService } from '../src/monitor/alerting/alerting.service.js';
import { makeTestTls, startWebhookReceiver } from '../test/support/webhook-receivers.fixture.js';

const MONITORS = Number(process.env.MONITORS ?? 1000);
const SLOW_MS = Number(process.env.SLOW_MS ?? 2000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16);
const BASELINE_S = Number(process.env.BASELINE_S ?? 15);

/** Child mode: run the two receivers, print their URLs and certificate, count requests. */
async function receiverMain(): Promise<void> {
  const tls = makeTestTls();
  const slow = await startWebhookReceiver(tls, { status: 200, body: 'ok', delayMs: SLOW_MS });
  const fast = await startWebhookReceiver(tls, { status: 202 });
  console.log(JSON.stringify({ slow: slow.url, fast: fast.url, cert: tls.cert }));
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

interface Lateness {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  eldP99Ms: number;
  samples: number;
}

/** Samples a 10 ms timer's lateness and the event-loop delay histogram until stop() is called. */
function sampleLateness(): { stop(): Lateness } {
  const lates: number[] = [];
  const eld = monitorEventLoopDelay({ resolution: 10 });
  eld.enable();
  let expected = performance.now() + 10;
  const t = setInterval(() => {
    const n = performance.now();
    lates.push(Math.max(0, n - expected));
    expected = n + 10;
  }, 10);
  return {
    stop() {
      clearInterval(t);
      eld.disable();
      const s = [...lates].sort((a, b) => a - b);
      const q = (p: number) => Number((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0).toFixed(2));
      return {
        p50Ms: q(0.5),
        p99Ms: q(0.99),
        maxMs: q(1),
        eldP99Ms: Number((eld.percentile(99) / 1e6).toFixed(2)),
        samples: s.length,
      };
    },
  };
}

async function startReceivers(): Promise<{ child: ChildProcess; slow: string; fast: string; cert: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--receiver'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env },
  });
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (c) => reject(new Error(`receiver exited ${c}`)));
  });
  return { child, ...(JSON.parse(line) as { slow: string; fast: string; cert: string }) };
}

async function main(): Promise<void> {
  const rx = await startReceivers();
  const dir = mkdtempSync(join(tmpdir(), 'bench-alerts-'));
  const store = await openLmdbStore({ path: dir });
  const agent = new https.Agent({ ca: rx.cert, keepAlive: true, maxSockets: 256 });
  const alerting = createAlertingService({
    store,
    log: pino({ level: 'silent' }),
    secrets: createSecretBox(randomBytes(32)),
    channels: createChannelRegistry({ agent, timeoutMs: 10_000 }),
    queue: { concurrency: CONCURRENCY },
  });
  try {
    await alerting.start();
    await alerting.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${rx.slow}/services/T/B/x` });
    await alerting.channelSettings.set('teams', { enabled: 'true', webhookUrl: `${rx.fast}/workflows/x` });
    const monitors = Array.from({ length: MONITORS }, (_, i) => ({
      name: `m${i}`,
      type: 'url',
      tags: '[bench]',
      notifyAfter: '1',
    }));

    // Baseline: the same 1,000 DOWN results with notifications off (state bookkeeping only), same sampling.
    const base = sampleLateness();
    for (const m of monitors) alerting.onResult({ ...m, notifyStatus: 'off' }, 'DOWN', { responseTimeMs: 5 });
    await new Promise((r) => setTimeout(r, BASELINE_S * 1000));
    const baseline = base.stop();
    for (const m of monitors) alerting.onResult({ ...m, notifyStatus: 'off' }, 'OK');
    await alerting.idle();

    // Burst: every monitor fails in the same minute → one alert per monitor per channel.
    global.gc?.();
    const mem0 = process.memoryUsage();
    let peakRss = mem0.rss;
    let peakHeap = mem0.heapUsed;
    const memTimer = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 250);
    const live = sampleLateness();
    const t0 = performance.now();
    const enqueue0 = performance.now();
    for (const m of monitors)
      alerting.onResult({ ...m, notifyStatus: 'on' }, 'DOWN', { responseTimeMs: 5, message: 'connect ECONNREFUSED' });
    const enqueueMs = performance.now() - enqueue0;
    const doneAt: Record<string, number> = {};
    const poll = setInterval(() => {
      const p = alerting.pending();
      for (const ch of ['slack', 'teams'])
        if (doneAt[ch] === undefined && (p[ch] ?? 0) === 0) doneAt[ch] = performance.now() - t0;
    }, 20);
    await alerting.idle();
    clearInterval(poll);
    const totalMs = performance.now() - t0;
    const during = live.stop();
    clearInterval(memTimer);
    const { delivered, failed } = alerting.outcomes();

    const figures = {
      monitors: MONITORS,
      slowChannelAnswerMs: SLOW_MS,
      concurrencyPerChannel: CONCURRENCY,
      alertsDelivered: delivered,
      alertsFailed: failed,
      enqueue1000Ms: Number(enqueueMs.toFixed(1)),
      fastChannelAllDeliveredMs: Math.round(doneAt.teams ?? totalMs),
      slowChannelAllDeliveredMs: Math.round(doneAt.slack ?? totalMs),
      allDeliveredMs: Math.round(totalMs),
      idealSlowChannelMs: Math.round((MONITORS / CONCURRENCY) * SLOW_MS),
      baselineLatenessP50Ms: baseline.p50Ms,
      baselineLatenessP99Ms: baseline.p99Ms,
      baselineLatenessMaxMs: baseline.maxMs,
      baselineEldP99Ms: baseline.eldP99Ms,
      alertsLatenessP50Ms: during.p50Ms,
      alertsLatenessP99Ms: during.p99Ms,
      alertsLatenessMaxMs: during.maxMs,
      alertsEldP99Ms: during.eldP99Ms,
      latenessP99Ratio: Number((during.p99Ms / Math.max(0.01, baseline.p99Ms)).toFixed(2)),
      rssStartMb: Number((mem0.rss / 2 ** 20).toFixed(1)),
      rssPeakMb: Number((peakRss / 2 ** 20).toFixed(1)),
      heapPeakDeltaMb: Number(((peakHeap - mem0.heapUsed) / 2 ** 20).toFixed(1)),
    };
    console.log(
      `${MONITORS} monitors DOWN at once; slack answers after ${SLOW_MS} ms (concurrency ${CONCURRENCY}), teams at once`,
    );
    console.log(`  enqueue of ${MONITORS} results: ${figures.enqueue1000Ms} ms (onResult is synchronous)`);
    console.log(
      `  teams: all ${MONITORS} delivered after ${figures.fastChannelAllDeliveredMs} ms; slack after ${figures.slowChannelAllDeliveredMs} ms (ideal ${figures.idealSlowChannelMs} ms)`,
    );
    console.log(`  delivered ${delivered}, failed ${figures.alertsFailed}`);
    console.log(
      `  10 ms timer lateness p50/p99/max: baseline ${baseline.p50Ms}/${baseline.p99Ms}/${baseline.maxMs} ms, during alerts ${during.p50Ms}/${during.p99Ms}/${during.maxMs} ms (p99 ratio ${figures.latenessP99Ratio}×)`,
    );
    console.log(`  event-loop delay p99: baseline ${baseline.eldP99Ms} ms, during alerts ${during.eldP99Ms} ms`);
    console.log(
      `  memory: rss ${figures.rssStartMb} → peak ${figures.rssPeakMb} MB, heap +${figures.heapPeakDeltaMb} MB`,
    );
    console.log(JSON.stringify(figures));
  } finally {
    await alerting.stop();
    await store.close();
    agent.destroy();
    rx.child.stdin?.end();
    rx.child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--receiver')) {
  void receiverMain();
} else {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
