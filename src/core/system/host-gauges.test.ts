import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { registerHostGauges } from './host-gauges.js';

function fakeProc(memAvailableKb: number, busy: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-proc-'));
  write(dir, memAvailableKb, busy);
  return dir;
}

function write(dir: string, memAvailableKb: number, busy: number): void {
  fs.writeFileSync(
    path.join(dir, 'stat'),
    `cpu  ${busy} 0 0 1000 0 0 0 0 0 0\ncpu0 ${busy} 0 0 1000 0 0 0 0 0 0\nbtime 1700000000\n`,
  );
  fs.writeFileSync(
    path.join(dir, 'meminfo'),
    `MemTotal: 1000000 kB\nMemFree: 100 kB\nMemAvailable: ${memAvailableKb} kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n`,
  );
  fs.writeFileSync(path.join(dir, 'loadavg'), '0.50 0.25 0.10 1/100 42\n');
  fs.writeFileSync(path.join(dir, 'uptime'), '3600.5 100.0\n');
  fs.writeFileSync(path.join(dir, 'mounts'), 'proc /proc proc rw 0 0\n');
}

test('host gauges: one cached snapshot per maxAgeMs; CPU % is the busy share since the previous snapshot', async () => {
  const dir = fakeProc(250_000, 0);
  let now = 1_000_000;
  const registry = new Registry();
  const snapshot = registerHostGauges(registry, { prefix: 'h', procRoot: dir, now: () => now, maxAgeMs: 5000 });
  write(dir, 250_000, 1000); // 1,000 busy and 0 idle ticks since registration: 100 %
  const text = await registry.metrics();
  assert.match(text, /^h_cpu_used_percent 100$/m);
  assert.match(text, /^h_memory_used_percent 75$/m);
  assert.match(text, /^h_memory_total_bytes 1024000000$/m);
  assert.match(text, /^h_load5 0\.25$/m);
  assert.match(text, /^h_uptime_seconds 3601$/m);
  assert.match(text, /^h_swap_used_percent 0$/m);
  write(dir, 500_000, 1000);
  now += 4000;
  assert.equal((await snapshot()).memory.usedPct, 75, 'within maxAgeMs the snapshot is reused (nothing re-read)');
  now += 2000;
  const fresh = await snapshot();
  assert.equal(fresh.memory.usedPct, 50);
  assert.equal(fresh.cpuPct, 0, 'no busy ticks since the previous snapshot');
  fs.rmSync(dir, { recursive: true, force: true });
});
