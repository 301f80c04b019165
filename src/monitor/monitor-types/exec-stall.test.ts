/**
 * exec runs whose browser context never opens (a fake driver, no browser needed): Playwright can leave a context's
 * creation pending forever once the browser is killed meanwhile — exec.test.ts's crash test hung on it under load
 * until its file timeout. A run must end when the browser goes (exception, the next run relaunches) or at its own
 * timeout (down), and a context that arrives after that is closed, never leaked.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createExecType } from './exec.js';
import type { Driver, LaunchedBrowser, Session } from './exec/session.js';
import { makeContext } from './exec/testing.js';

/** A browser whose newSession stays pending until `open()`; `kill()` disconnects it as a crash would. */
class StallingBrowser implements LaunchedBrowser {
  readonly kind = 'chromium' as const;
  readonly pid = undefined;
  readonly supports = { video: false, har: false };
  connected = true;
  closedSessions = 0;
  private readonly listeners = new Set<() => void>();
  private pending: Array<(s: Session) => void> = [];

  isConnected() {
    return this.connected;
  }
  onDisconnected(cb: () => void) {
    this.listeners.add(cb);
    return () => void this.listeners.delete(cb);
  }
  get listenerCount() {
    return this.listeners.size;
  }
  newSession(): Promise<Session> {
    return new Promise((resolve) => this.pending.push(resolve));
  }
  /** Resolves every pending newSession with a session that counts its close. */
  open() {
    const session = {
      close: async () => {
        this.closedSessions++;
        return {};
      },
    } as unknown as Session;
    for (const resolve of this.pending.splice(0)) resolve(session);
  }
  kill() {
    this.connected = false;
    for (const cb of [...this.listeners]) cb();
  }
  async close() {}
}

function harness(o: { startDisconnected?: boolean } = {}) {
  const browsers: StallingBrowser[] = [];
  const driver: Driver = async () => {
    const b = new StallingBrowser();
    // The pool checks a browser it already has, not the one it just launched: this one reaches the run gone.
    if (o.startDisconnected) b.connected = false;
    browsers.push(b);
    return b;
  };
  const exec = createExecType({ poolOptions: { drivers: { chromium: driver }, prewarm: false } });
  const run = async (timeoutMs: number) => {
    const ctx = makeContext({ timeoutMs });
    try {
      return await exec.type.check({ name: 't', type: 'exec', steps: '[{"action":"goto","url":"http://x/"}]' }, ctx);
    } finally {
      ctx.dispose();
    }
  };
  return { exec, browsers, run };
}

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 5));
};

describe('exec: a browser context that never opens', () => {
  test('the browser crashing meanwhile ends the run as exception at once; the next run relaunches', async () => {
    const { exec, browsers, run } = harness();
    try {
      const pending = run(600_000);
      // The pool's listener and the run's: the run is waiting on the context, so the crash reaches it as an event.
      await until(() => browsers[0]?.listenerCount === 2);
      browsers[0]!.kill();
      const r = await pending;
      assert.equal(r.outcome, 'exception', r.message);
      assert.match(r.message ?? '', /cannot open a browser context: the browser crashed or disconnected/);
      assert.equal(browsers[0]!.listenerCount, 1, 'the run unsubscribed (the pool keeps its own listener)');
      const next = run(200);
      await until(() => browsers.length === 2);
      assert.equal((await next).outcome, 'down', 'the relaunched browser stalls too: the timeout ends the run');
    } finally {
      await exec.close();
    }
  });

  test('a browser gone before the run subscribed (no event to come) ends the run as exception', async () => {
    const { exec, browsers, run } = harness({ startDisconnected: true });
    try {
      const r = await run(600_000);
      assert.equal(r.outcome, 'exception', r.message);
      assert.match(r.message ?? '', /the browser crashed or disconnected/);
      assert.equal(browsers.length, 1);
    } finally {
      await exec.close();
    }
  });

  test("the run's timeout ends it as down; a context that opens later is closed", async () => {
    const { exec, browsers, run } = harness();
    try {
      const r = await run(150);
      assert.equal(r.outcome, 'down', r.message);
      assert.equal(r.message, 'transaction timed out while opening a browser context');
      assert.equal(browsers[0]!.listenerCount, 1, 'the run unsubscribed');
      browsers[0]!.open();
      await until(() => browsers[0]!.closedSessions === 1);
    } finally {
      await exec.close();
    }
  });
});
