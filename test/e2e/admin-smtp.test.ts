/**
 * The admin page in headless Chromium: an alert mail that failed (the default smtpSecure starttls against a plain
 * relay) is shown above the admin tabs, and saving the SMTP settings shows what the server probe found.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { chromiumAvailable, launch, newContext, startUiService, ADMIN_PASSWORD, type UiHarness } from './ui.harness.js';

const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;

describe('admin page: failed deliveries and the SMTP probe', { skip, timeout: 180_000 }, () => {
  let h: UiHarness;
  let browser: Browser;
  let relay: SMTPServer;
  let port = 0;

  before(async () => {
    assert.ok(chromiumAvailable(), 'chromium must exist at /usr/bin/chromium (CI=true)');
    relay = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS', 'AUTH'],
      onData: (s, _x, cb) => s.resume().on('end', () => cb()),
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    port = (relay.server.address() as AddressInfo).port;
    [h, browser] = await Promise.all([startUiService(), launch()]);
  });
  after(async () => {
    await browser?.close();
    await h?.stop();
    await new Promise<void>((r) => relay?.close(() => r()));
  });

  it('shows the last failed delivery, then what the probe found after a save', async () => {
    const set = await h.admin.request('POST', '/setsmtpvault', {
      body: { smtpHost: '127.0.0.1', smtpPort: String(port), smtpFrom: 'alerts@example.com', smtpEnabled: 'true' },
    });
    assert.equal(set.body.probe.ok, false, 'starttls against a plain relay');
    const c = await h.admin.request('POST', '/tcp/create', {
      body: { name: 'ui-mail', state: 'off', ip: '127.0.0.1', port: '9', emailOnF: 'true', emailR: 'ops@example.com' },
    });
    assert.equal(c.status, 201, c.text);
    await h.admin.request('GET', '/monitor/run/ui-mail/hide');
    await h.svc.alerting.idle();

    const ctx = await newContext(browser, h);
    const page = await ctx.newPage();
    await page.goto(`${h.url}/`);
    await page.fill('#username', 'admin');
    await page.fill('#password', ADMIN_PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:text("Monitors")');
    await page.evaluate(() => (location.hash = '#/admin/smtp'));
    const banner = page.locator('.failed-delivery [role=alert]');
    await banner.waitFor();
    const text = (await banner.textContent()) ?? '';
    assert.match(text, /Last failed alert delivery: .*email for ui-mail \(DOWN\)/);
    assert.match(text, /STARTTLS|500/);

    await page.selectOption('#a-smtpSecure', 'none');
    await page.click('form.mform button[type=submit]');
    const probe = page.locator('.smtp-probe [role=status]');
    await probe.waitFor();
    assert.match((await probe.textContent()) ?? '', /Probe: a plain, unencrypted connection to 127\.0\.0\.1/);
    assert.match((await page.locator('.smtp-probe').textContent()) ?? '', /STARTTLS offered: no/);
    await ctx.close();
  });
});
