/**
 * Real time, no run-now: a 1MIN monitor runs by itself within its first interval (next minute boundary + its spread
 * offset, at most 108 s), its result is stored, and /api/metrics shows its gauges.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startMonitor } from '../support/monitor.harness.js';

test('a 1MIN monitor fires on its own and shows in /api/metrics', { timeout: 240_000 }, async () => {
  const h = await startMonitor();
  try {
    const c = await h.admin.request('POST', '/sys/create', {
      body: { name: 'tick', sched: '1MIN', probe: 'p9', location: 'lab' },
    });
    assert.equal(c.status, 201, c.text);
    const info = h.svc.engine.scheduleInfo('tick')!;
    assert.ok(
      info.nextDueMs! - Date.now() <= 108_000,
      'due within the first interval (next minute + up to 48 s of spread)',
    );
    let last: { status: string; ts: number } | undefined;
    const deadline = Date.now() + 170_000;
    while (!last && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      const list = await h.admin.request('GET', '/monitors?type=sys');
      last = list.body.find((m: { name: string }) => m.name === 'tick')?.last;
    }
    assert.ok(last, 'the monitor ran by itself');
    assert.ok(last.ts >= info.nextDueMs!, 'it ran at (or after) its due time, not at creation');
    const metrics = await h.admin.request('GET', '/api/metrics', { token: null });
    assert.equal(metrics.status, 200);
    assert.match(
      metrics.text,
      /sentinel_monitor_status\{name="tick",type="sys",probe="p9",location="lab",status="(OK|MINOR|MAJOR|CRITICAL)"\} [0-3]/,
    );
    assert.match(
      metrics.text,
      /sentinel_monitor_response_time_ms\{name="tick",type="sys",probe="p9",location="lab"\} \d/,
    );
  } finally {
    await h.stop();
  }
});
