/**
 * The certificates page in the dashboard (headless Chromium): a certificate an https url monitor saw is listed with
 * its expiry level and days left, subject and its monitor, whose link opens that monitor's page; once the monitor is
 * deleted the page says no certificate is seen (no row linking to a monitor that is gone).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';
import { adminPage, chromiumAvailable, launch, startUiService, type UiHarness } from './ui.harness.js';

const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;

describe('the certificates page', { skip, timeout: 180_000 }, () => {
  let h: UiHarness;
  let browser: Browser;
  let targets: HttpTargets;

  before(async () => {
    h = await startUiService();
    targets = await startHttpTargets({ serverCertDays: 10 }); // expires in 10 days: MAJOR
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await targets?.close();
    await h?.stop();
  });

  it('lists the certificate with its level and monitor, links the monitor, and drops it once deleted', async () => {
    const body = {
      name: 'cert-web',
      display_name: 'Cert web',
      url: `${targets.httpsUrl}/ok`,
      ignoreTlsErrors: 'true',
      sched: '5MIN',
      state: 'off',
      probe: 'p',
    };
    const made = await h.admin.request('POST', '/url/create', { body });
    assert.equal(made.status, 201, made.text);
    assert.equal((await h.admin.request('GET', '/monitor/run/cert-web/hide')).body.status, 'MAJOR');
    const { page, errors } = await adminPage(browser, h);
    await page.click('a[href="#/certificates"]');
    const row = page.locator('#cert-table tbody tr');
    await row.waitFor({ timeout: 30_000 });
    assert.equal(await row.count(), 1);
    const pill = row.locator('.pill');
    assert.equal(await pill.getAttribute('class'), 'pill s-MAJOR');
    assert.equal(await pill.locator('.pill-icon').textContent(), '!!'); // the MAJOR icon
    assert.match((await pill.textContent()) ?? '', /^!!(9|10)(\.\d)? d$/);
    assert.match((await row.locator('td').nth(2).textContent()) ?? '', /^localhost/);
    const link = row.locator('td').nth(5).locator('a');
    assert.equal(await link.textContent(), 'cert-web');
    assert.equal(await link.getAttribute('href'), '#/m/url/5MIN/cert-web');
    await link.click();
    await page.waitForSelector('h1:text("Cert web")');

    const del = await h.admin.request('DELETE', '/delete/exec/5MIN/cert-web');
    assert.equal(del.status, 200, del.text);
    await page.click('a[href="#/certificates"]');
    await page.waitForSelector('p.muted:text("No certificates seen yet")');
    assert.equal(await page.locator('#cert-table').count(), 0);
    assert.deepEqual(errors, []);
  });
});
