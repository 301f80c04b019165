/**
 * Run-now forwarding (run-forward.ts) with a scripted cluster client: where the run happens, and that its result is
 * made readable before the answer — the holder publishes (flushes) a forwarded run, the instance asked follows (syncs)
 * after the holder answered — and that neither step's failure or hang costs the answer. The same flow between real instances
 * is test/engine/cluster-propagation.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { AppError } from '../../core/errors.js';
import type { ClusterClient } from './cluster-client.js';
import { createRunForwarding, FORWARD_MARGIN_MS, type RunForwardDeps } from './run-forward.js';

function setUp(
  o: {
    holder?: string;
    send?: ClusterClient['send'];
    publish?: () => Promise<void>;
    settleMs?: number;
    longestRunMs?: (name: string) => number;
  } = {},
) {
  const steps: string[] = [];
  const deps: RunForwardDeps = {
    client: {
      send:
        o.send ??
        (async (address, path) => {
          steps.push(`send ${address}${path}`);
          return { ran: 'there' };
        }),
    },
    log: pino({ level: 'silent' }),
    holderAddress: () => o.holder,
    local: async (name) => {
      steps.push(`local ${name}`);
      return { ran: 'here' };
    },
    publish:
      o.publish ??
      (async () => {
        steps.push('publish');
      }),
    follow: async () => {
      steps.push('follow');
    },
    settleMs: o.settleMs,
    longestRunMs: o.longestRunMs,
  };
  return { steps, runNow: createRunForwarding(deps) };
}

describe('run now forwarding', () => {
  it('a monitor held here runs here, and a direct request publishes nothing', async () => {
    const { steps, runNow } = setUp();
    assert.deepEqual(await runNow('m', false, { authorization: 'Bearer t', forwarded: false }), { ran: 'here' });
    assert.deepEqual(steps, ['local m']);
  });

  it('a forwarded run is published before it is answered', async () => {
    const { steps, runNow } = setUp({ holder: 'https://b:8051' });
    assert.deepEqual(await runNow('m', true, { authorization: 'Bearer t', forwarded: true }), { ran: 'here' });
    assert.deepEqual(steps, ['local m', 'publish'], 'a forwarded request is never forwarded again');
  });

  it('a monitor held elsewhere runs on its holder, and the instance asked follows before it answers', async () => {
    const { steps, runNow } = setUp({ holder: 'https://b:8051' });
    assert.deepEqual(await runNow('a b', false, { authorization: 'Bearer t', forwarded: false }), { ran: 'there' });
    assert.deepEqual(steps, ['send https://b:8051/monitor/run/a%20b/hide', 'follow']);
  });

  it("the holder is given the monitor's longest run and a margin before it counts as unreachable", async () => {
    let asked: number | undefined;
    let bound = 122_000;
    const { runNow } = setUp({
      holder: 'https://b:8051',
      send: async (_address, _path, o) => {
        asked = o.timeoutMs;
        return { ran: 'there' };
      },
      longestRunMs: () => bound,
    });
    await runNow('m', false, { authorization: 'Bearer t', forwarded: false });
    assert.equal(asked, 122_000 + FORWARD_MARGIN_MS);
    // A bound that is not a number (a stored record with a bad timeout) leaves the client's own deadline.
    bound = NaN;
    await runNow('m', false, { authorization: 'Bearer t', forwarded: false });
    assert.equal(asked, undefined);
  });

  it('a failed publish is logged, and the result is answered all the same', async () => {
    const { runNow } = setUp({ publish: () => Promise.reject(new Error('store down')) });
    assert.deepEqual(await runNow('m', false, { authorization: 'Bearer t', forwarded: true }), { ran: 'here' });
  });

  it('a publish that hangs holds the answer for settleMs only', { timeout: 10_000 }, async () => {
    const { runNow } = setUp({ publish: () => new Promise<void>(() => undefined), settleMs: 50 });
    const t0 = Date.now();
    assert.deepEqual(await runNow('m', false, { authorization: 'Bearer t', forwarded: true }), { ran: 'here' });
    assert.ok(Date.now() - t0 < 5_000, 'answered while the publish still hangs');
  });

  it("an unreachable holder: the run happens here and nothing is followed; the holder's own error is the answer", async () => {
    const down = setUp({ holder: 'https://b:8051', send: () => Promise.reject(new Error('ECONNREFUSED')) });
    assert.deepEqual(await down.runNow('m', false, { authorization: 'Bearer t', forwarded: false }), { ran: 'here' });
    assert.deepEqual(down.steps, ['local m']);
    const refused = setUp({
      holder: 'https://b:8051',
      send: () => Promise.reject(new AppError('NOT_FOUND', 'no such monitor')),
    });
    await assert.rejects(
      refused.runNow('m', false, { authorization: 'Bearer t', forwarded: false }),
      /no such monitor/,
    );
    assert.deepEqual(refused.steps, []);
  });
});
