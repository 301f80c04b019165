/**
 * Push monitors in the dashboard (headless Chromium, PUSH_PORT=0): the type is in the form (derived from the
 * OpenAPI: periodSeconds and graceSeconds, no token field); after create the monitor page shows the token once and
 * the ping URLs on the push port; a ping from a job without a client certificate shows up as the last ping; "Rotate
 * token" shows a new one, and the old one is refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { HttpsClient } from '../support/https-client.kit.js';
import { adminPage, chromiumAvailable, launch, startUiService, type UiHarness } from './ui.harness.js';

const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;

describe('push monitor in the dashboard', { skip, timeout: 180_000 }, () => {
  let h: UiHarness;
  let browser: Browser;
  let job: HttpsClient;

  before(async () => {
    h = await startUiService({ env: { PUSH_PORT: '0' } });
    browser = await launch();
    job = new HttpsClient(h.svc.pushUrl()!, { ca: fs.readFileSync(path.join(h.certDir, 'ca.pem'), 'utf8') });
  });
  after(async () => {
    job?.close();
    await browser?.close();
    await h?.stop();
  });

  it('create through the form, token shown once with the push URLs, last ping, rotate', async () => {
    const { page, errors } = await adminPage(browser, h);
    await page.goto(`${h.url}/#/new/push`);
    await page.waitForSelector('#f-periodSeconds');
    assert.equal(await page.locator('#f-token').count(), 0, 'the token is never a form field');
    await page.fill('#f-name', 'nightly-job');
    await page.fill('#f-periodSeconds', '3600');
    await page.click('button:text("Create monitor")');
    await page.waitForURL(/#\/m\/push\/5MIN\/nightly-job$/);
    const token = (await page.locator('#push-token').textContent({ timeout: 30_000 })) ?? '';
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    const pushPort = new URL(h.svc.pushUrl()!).port;
    const urls = await page.locator('#push-card code.push-url').allTextContents();
    assert.ok(urls.includes(`https://127.0.0.1:${pushPort}/push/${token}/start`), urls.join(' '));

    assert.equal((await job.request('POST', `/push/${token}`, { token: null })).status, 200);
    // Leave the page and come back (the session lives in the page: no reload).
    await page.click('a:text("← Monitors")');
    await page.waitForSelector('h1:text("Monitors")');
    await page.evaluate(() => (location.hash = '#/m/push/5MIN/nightly-job'));
    await page.waitForSelector('#push-card dd:text-matches("^success · ")', { timeout: 30_000 });
    assert.equal(await page.locator('#push-token').count(), 0, 'shown once: not when the page is opened again');

    await page.click('#push-rotate');
    await page.click('dialog button:text("Rotate")');
    await page.waitForSelector('#push-token');
    const fresh = (await page.locator('#push-token').textContent()) ?? '';
    assert.match(fresh, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(fresh, token);
    assert.equal((await job.request('POST', `/push/${token}`, { token: null })).status, 404);
    assert.equal((await job.request('POST', `/push/${fresh}`, { token: null })).status, 200);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});
