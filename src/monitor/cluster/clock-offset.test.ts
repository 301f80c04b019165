/**
 * Clock offsets: the minimum-delay filter (a slow heartbeat does not skew the estimate), the skew bound taking the
 * uncertainty into account, and on a real PostgreSQL: a member whose wall clock is 10 s ahead reports ≈ +10 s in its
 * membership row (what GET /cluster lists for other members) and logs one warning; one whose clock agrees does not.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createTestDatabase, reportUnavailable } from '../../../test/support/pg-database.fixture.js';
import { CLOCK_SKEW_WARN_MS, ClockOffset } from './clock-offset.js';
import { ClusterStore } from './cluster-store.js';
import { ClusterCoordinator } from './coordinator.js';

describe('ClockOffset', () => {
  it('keeps the sample with the shortest round trip of the window', () => {
    const c = new ClockOffset(3);
    assert.deepEqual(c.add(1000, 1010, 1000), { offsetMs: 5, uncertaintyMs: 5 });
    // A slow heartbeat (db answered early in a 2 s round trip) would say +1 s; the estimate stays the tight one.
    assert.deepEqual(c.add(2000, 4000, 2000), { offsetMs: 5, uncertaintyMs: 5 });
    c.add(5000, 5100, 5050);
    c.add(6000, 6100, 6050);
    // The 10 ms sample left the window of 3: the best of the rest (100 ms round trips) is 0 ± 50.
    assert.deepEqual(c.estimate(), { offsetMs: 0, uncertaintyMs: 50 });
  });

  it('calls a clock skewed only beyond the bound plus the uncertainty', () => {
    assert.equal(ClockOffset.skewed(undefined), false);
    assert.equal(ClockOffset.skewed({ offsetMs: CLOCK_SKEW_WARN_MS + 100, uncertaintyMs: 200 }), false);
    assert.equal(ClockOffset.skewed({ offsetMs: -(CLOCK_SKEW_WARN_MS + 300), uncertaintyMs: 200 }), true);
  });
});

describe('clock offset on PostgreSQL', async () => {
  const made = await createTestDatabase('clock');
  if ('unavailable' in made) return reportUnavailable(made.unavailable);
  const db = made;

  it('a member 10 s ahead reports it in its row and warns once; an agreeing member reports ≈ 0 and does not', async () => {
    const warnings: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const stores = [await ClusterStore.open(db.url, 'monitor'), await ClusterStore.open(db.url, 'monitor')];
    const self = (id: string) => ({ id, probe: 'p', location: '', version: 't', address: '', startedMs: Date.now() });
    const ahead = new ClusterCoordinator({
      store: stores[0]!,
      self: self('ahead'),
      log,
      heartbeatMs: 60_000,
      wall: () => Date.now() + 10_000,
    });
    const fine = new ClusterCoordinator({ store: stores[1]!, self: self('fine'), log: pino({ level: 'silent' }) });
    try {
      for (let i = 0; i < 2; i++) {
        await ahead.cycle(); // the first heartbeat measures; the next one writes what it measured
        await fine.cycle();
      }
      const rows = new Map((await stores[1]!.liveMembers(60_000)).map((m) => [m.id, m.clockOffsetMs]));
      assert.ok(Math.abs(rows.get('ahead')! - 10_000) < 1000, `ahead: ${rows.get('ahead')}`);
      assert.ok(Math.abs(rows.get('fine')!) < 1000, `fine: ${rows.get('fine')}`);
      assert.ok(Math.abs(ahead.selfFigures().clockOffsetMs - 10_000) < 1000);
      const skew = warnings.filter((w) => /clock is off/.test(String(w.msg)));
      assert.equal(skew.length, 1, 'one warning, not one per heartbeat');
      assert.equal(skew[0]!.level, 40);
    } finally {
      await ahead.stop();
      await fine.stop();
      for (const s of stores) await s.close();
      await db.drop();
    }
  });
});
