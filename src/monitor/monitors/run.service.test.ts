import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { createNetworkPolicy } from '../monitor-types/lib/network-policy.js';
import type { CheckContext, CheckResult, DbName, MonitorConfig, MonitorType } from '../monitor-types/types.js';
import type { MonitorsService } from './monitors.service.js';
import type { StoredMonitor } from './monitors.repo.js';
import { RunService, type RunDeps, type RunResult } from './run.service.js';

function runnerWith(
  check: (c: MonitorConfig, ctx: CheckContext) => Promise<CheckResult>,
  extra: Omit<Partial<MonitorType>, 'autoThresholds'> & { autoThresholds?: RunDeps['autoThresholds'] } = {},
) {
  const { autoThresholds, ...typeExtra } = extra;
  const type: MonitorType = { id: 'tcp', fields: Type.Object({}), required: [], secretFields: [], check, ...typeExtra };
  const recorded: RunResult[] = [];
  const monitors = {
    plainConfig: (m: StoredMonitor) => ({ ...m.config, name: m.name, type: m.type }),
  } as unknown as MonitorsService;
  const runner = new RunService({
    monitors,
    types: new Map<DbName, MonitorType>([['tcp', type]]),
    log: pino({ level: 'silent' }),
    policy: () => createNetworkPolicy(),
    secrets: { get: () => Promise.resolve(undefined) },
    settings: { get: () => undefined },
    artifactRoot: '/nonexistent/artifacts',
    sinks: { record: (_m, r) => recorded.push(r) },
    autoThresholds,
  });
  return { runner, recorded };
}

const monitor = (config: Record<string, string>): StoredMonitor => ({
  name: 'm1',
  type: 'tcp',
  createdMs: 0,
  updatedMs: 0,
  config,
});

test('a check that ignores its abort signal is cut off one second after its deadline: DOWN, and the signal was aborted', async () => {
  let signal: AbortSignal | undefined;
  const { runner, recorded } = runnerWith((_c, ctx) => {
    signal = ctx.signal;
    return new Promise<CheckResult>(() => undefined); // never settles, never looks at its signal
  });
  const t0 = performance.now();
  const r = await runner.run(monitor({ timeout: '0.2' }));
  const ms = performance.now() - t0;
  assert.equal(r.status, 'DOWN');
  assert.match(r.message ?? '', /timeout after 200 ms \(check did not stop\)/);
  assert.equal(signal?.aborted, true);
  assert.match(String((signal?.reason as Error).message), /timeout after 200 ms/);
  assert.ok(ms >= 1150, `cut off after the deadline plus the grace second (${Math.round(ms)} ms)`);
  assert.deepEqual(
    recorded.map((x) => x.status),
    ['DOWN'],
  );
});

test('work a finished check left listening on its signal is told to stop; retries re-attempt a failure', async () => {
  const signals: AbortSignal[] = [];
  let leftoverStopped = 0;
  let calls = 0;
  const { runner } = runnerWith((_c, ctx) => {
    signals.push(ctx.signal);
    calls++;
    if (calls === 1) ctx.signal.addEventListener('abort', () => leftoverStopped++); // e.g. a close still running
    return Promise.resolve(
      calls < 3 ? { outcome: 'down', responseTimeMs: 1, message: 'refused' } : { outcome: 'up', responseTimeMs: 2 },
    );
  });
  const r = await runner.run(monitor({ retries: '2' }));
  assert.equal(r.status, 'OK');
  assert.equal(r.attempts, 3);
  assert.equal(leftoverStopped, 1);
  assert.equal(signals[0]!.aborted, true);
  assert.notEqual(signals[0], signals[1], 'each attempt has its own signal');
});

test('ctx.artifactDir and ctx.log are made on demand and name the monitor and run', async () => {
  let dir: string | undefined;
  const { runner } = runnerWith((_c, ctx) => {
    dir = ctx.artifactDir;
    ctx.log.debug('hello');
    return Promise.resolve({ outcome: 'up', responseTimeMs: 1 });
  });
  const r = await runner.run(monitor({}));
  assert.equal(dir, `/nonexistent/artifacts/m1/${r.ts}`);
});

test('automatic thresholds (from response times) apply only where thresholds compare the response time', async () => {
  const auto = () => ({ threshMin: 1, threshMaj: 2, threshCri: 3 });
  const onValue = runnerWith(() => Promise.resolve({ outcome: 'up', responseTimeMs: 5, thresholdValue: 50 }), {
    autoThresholds: auto,
    thresholdsOn: (c) => (c.threshOn === 'value' ? 'value' : 'responseTime'),
  });
  assert.deepEqual(onValue.runner.thresholdsFor(monitor({ threshOn: 'value' })), { source: 'none' });
  assert.equal((await onValue.runner.run(monitor({ threshOn: 'value' }))).status, 'OK');
  assert.equal(onValue.runner.thresholdsFor(monitor({ threshOn: 'responseTime' })).source, 'auto');
  assert.equal(onValue.runner.thresholdsFor(monitor({ threshOn: 'value', threshCri: '40' })).source, 'fixed');
  assert.equal((await onValue.runner.run(monitor({ threshOn: 'value', threshCri: '50' }))).status, 'CRITICAL');
});

test("a stored record without a timeout runs with its type's default timeout, else 10 s", async () => {
  const seen: number[] = [];
  const check = (_c: MonitorConfig, ctx: CheckContext) => (
    seen.push(ctx.timeoutMs),
    Promise.resolve({ outcome: 'up' as const, responseTimeMs: 1 })
  );
  await runnerWith(check, { defaults: { timeout: '60' } }).runner.run(monitor({}));
  await runnerWith(check).runner.run(monitor({}));
  await runnerWith(check, { defaults: { timeout: '60' } }).runner.run(monitor({ timeout: '3' }));
  assert.deepEqual(seen, [60_000, 10_000, 3_000]);
});

test("longestRunMs: every attempt to its timeout and the grace second (run now's forwarding waits that long)", () => {
  const never = () => new Promise<CheckResult>(() => undefined);
  const { runner } = runnerWith(never);
  assert.equal(runner.longestRunMs(monitor({})), 11_000, 'the 10 s default, one attempt');
  assert.equal(runner.longestRunMs(monitor({ timeout: '0.2', retries: '2' })), 3 * 1200);
  const exec = runnerWith(never, { defaults: { timeout: '60' } }).runner;
  assert.equal(exec.longestRunMs(monitor({ retries: '1' })), 2 * 61_000, "the type's default timeout");
});
