/**
 * Where each result ran, in the dashboard (headless Chromium): on a monitor's page the header's "Last ran on" line,
 * each recent run's origin column and the run-now output name the instance's probe, location and host
 * (PROBE/LOCATION of the service, history/origins.ts); the overview row's probe cell tells it in its title.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import type { Browser } from 'playwright-core';
import { adminPage, chromiumAvailable, launch, startTarget, startUiService, type UiHarness } from './ui.harness.js';

const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;
const ORIGIN = `ui-probe · Lab 7 · ${os.hostname()}`;

describe('result origins in the dashboard', { skip, timeout: 180_000 }, () => {
  let h: UiHarness;
  let browser: Browser;
  let target: Awaited<ReturnType<typeof startTarget>>;

  before(async () => {
    h = await startUiService({ env: { PROBE: 'ui-probe', LOCATION: 'Lab 7' } });
    target = await startTarget();
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await target?.close();
    await h?.stop();
  });

  it('the last result, the recent runs and run now show probe · location · instance', async () => {
    const body = {
      name: 'origin-web',
      display_name: 'Origin web',
      url: target.url,
      sched: '5MIN',
      state: 'on',
      probe: 'ui-probe',
    };
    const made = await h.admin.request('POST', '/url/create', { body });
    assert.equal(made.status, 201, made.text);
    assert.equal((await h.admin.request('GET', '/monitor/run/origin-web/hide')).body.status, 'OK');
    const { page, errors } = await adminPage(browser, h);
    const row = page.locator('.mrow[data-name="origin-web"][data-status="OK"]');
    await row.waitFor({ timeout: 30_000 });
    assert.equal(await row.locator('.m-meta').getAttribute('title'), `last result ran on ${ORIGIN}`);
    await row.click();
    await page.waitForSelector('dt:text("Last ran on")');
    assert.equal(await page.locator('dt:text("Last ran on") + dd').textContent(), ORIGIN);
    await page.waitForSelector('.recent .run-origin');
    assert.equal(await page.locator('.recent .run-origin').first().textContent(), ORIGIN);
    await page.click('#run-now');
    await page.waitForSelector('.run-out .run-origin');
    assert.equal(await page.locator('.run-out .run-origin').textContent(), `ran on ${ORIGIN}`);
    assert.deepEqual(errors, []);
  });
});
