/**
 * docs/security.md §9 (review F10): a monitored page cannot inflate a run's result through the timing binding it can
 * see. Through the HTTP API as a `user`: an exec monitor opens a page that calls the binding 3,000 times (10 KB URLs,
 * as in the review, and again with short URLs); the run passes, keeps at most 200 navigations with URLs of at most
 * 2 KB, and what `readonly` reads back (run result, getMonitorDetails) stays within 64 KB (before the fix: 30 MB).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startBrowserSite, type BrowserSite } from '../support/browser-site.fixture.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const noChromium = !fs.existsSync('/usr/bin/chromium');
const KB64 = 64 * 1024;
let h: MonitorHarness;
let site: BrowserSite;
let bob: HttpsClient;
let rita: HttpsClient;

before(async () => {
  if (noChromium && process.env.CI === 'true') throw new Error('chromium is missing (apt-get install chromium)');
  [h, site] = await Promise.all([startMonitor(), startBrowserSite()]);
  for (const [username, group] of [
    ['bob', 'user'],
    ['rita', 'readonly'],
  ] as const) {
    const r = await h.admin.request('POST', '/api/users', {
      body: { username, password: `${username}-Pass-1234`, group, enabled: 'true' },
    });
    assert.equal(r.status, 201, r.text);
  }
  bob = h.client();
  await bob.login('bob', 'bob-Pass-1234');
  rita = h.client();
  await rita.login('rita', 'rita-Pass-1234');
});
after(async () => {
  await h?.stop();
  await site?.close();
});

for (const len of [10_000, 100]) {
  test(
    `3,000 forged timings with ${len}-character URLs leave a result under 64 KB`,
    { skip: noChromium && 'no chromium' },
    async () => {
      const name = `flood-${len}`;
      const steps = [
        { name: 'hostile page', action: 'goto', url: `${site.url}/flood?n=3000&len=${len}` },
        { name: 'all sent', action: 'assertText', selector: '#sent', text: 'sent 3000' },
      ];
      const c = await bob.request('POST', '/exec/create', { body: { name, steps, artifacts: 'never', har: 'false' } });
      assert.equal(c.status, 201, c.text);
      const r = await bob.request('GET', `/monitor/run/${name}/show`);
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'OK', r.text.slice(0, 2000));
      assert.ok(r.raw.length <= KB64, `run result ${r.raw.length} bytes`);
      const navs = r.body.details.navigations as { url: string }[];
      assert.ok(navs.length <= 200 + steps.length, `${navs.length} navigations kept (200 pushed + one read per step)`);
      assert.ok(
        navs.every((n) => n.url.length <= 2049),
        'URLs cut to 2 KB',
      );
      assert.ok(
        navs.some((n) => n.url.startsWith(`${site.url}/flood`)),
        'the real navigation is kept',
      );
      const d = await rita.request('POST', '/getMonitorDetails', { body: { type: 'exec', name, sched: '5MIN' } });
      assert.equal(d.status, 200, d.text.slice(0, 500));
      assert.ok(d.raw.length <= 2 * KB64, `details ${d.raw.length} bytes`);
    },
  );
}
