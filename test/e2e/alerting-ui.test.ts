/**
 * The dashboard's alerting pages in headless Chromium: the Channels tab shows one card per registered channel, built
 * from GET /alerting/catalog (secret fields as password inputs, choices as selects); a webhook is configured through
 * its form and a test is sent to a local receiver; the monitor form offers the channels' notification fields; on a
 * failing monitor's page a user acknowledges the open problem with a note (the webhook receives the acknowledgement
 * with who and the note) and removes the acknowledgement again. Screenshots go to test-output/e2e/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { adminPage, chromiumAvailable, launch, startUiService, type UiHarness } from './ui.harness.js';
import {
  type TestTls,
  type WebhookReceiver,
  makeTestTls,
  startWebhookReceiver,
} from '../support/webhook-receivers.fixture.js';

const OUT = path.resolve('test-output/e2e');
const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;

async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
}

describe('alerting in the dashboard', { skip, timeout: 240_000 }, () => {
  let h: UiHarness;
  let tls: TestTls;
  let rx: WebhookReceiver;
  let browser: Browser;

  before(async () => {
    assert.ok(chromiumAvailable(), 'chromium must exist at /usr/bin/chromium (CI=true)');
    tls = makeTestTls();
    rx = await startWebhookReceiver(tls, { status: 204 });
    h = await startUiService({ service: { notify: { agent: tls.agent, timeoutMs: 5000 } } });
    browser = await launch();
  });
  after(async () => {
    await browser?.close();
    await h?.stop();
    await rx?.close();
    tls?.agent.destroy();
  });

  it('channel forms from the catalog, a webhook test send, the monitor form fields, acknowledge with a note', async () => {
    const { page, errors } = await adminPage(browser, h);

    await page.evaluate(() => (location.hash = '#/admin/channels'));
    await page.waitForSelector('#channel-webhook');
    const catalog = await h.admin.request('GET', '/alerting/catalog');
    assert.equal(await page.locator('.card[id^="channel-"]').count(), catalog.body.length, 'one card per channel');
    assert.equal(await page.locator('#a-telegram-botToken').getAttribute('type'), 'password', 'secret field');
    assert.equal(await page.locator('#a-webhook-method').evaluate((e) => e.tagName), 'SELECT', 'choices');
    assert.equal(await page.locator('#channel-email a[href="#/admin/smtp"]').count(), 1);
    await page.fill('#a-webhook-url', `${rx.url}/hooks/sentinel`);
    await page.selectOption('#a-webhook-enabled', 'true');
    await page.fill('#a-webhook-hmacSecret', 'ui-signing-key');
    await page.locator('#channel-webhook button[type=submit]').click();
    await page.waitForSelector('.toast:text("Saved.")');
    const stored = await h.admin.request('GET', '/alerting/channels');
    assert.deepEqual(
      [stored.body.webhook.enabled, stored.body.webhook.url, stored.body.webhook.hmacSecret],
      ['true', 'set', 'set'],
    );
    const n = rx.requests.length;
    await page.locator('#channel-webhook button:text("Send test")').click();
    await page.waitForSelector('.toast:text("Test sent through webhook")');
    assert.equal(rx.requests[n]!.body.kind, 'test');
    assert.ok(rx.requests[n]!.headers['x-sentinel-signature']);
    await shot(page, '20-admin-channels');

    await page.evaluate(() => (location.hash = '#/new/tcp'));
    await page.waitForSelector('#f-notifyChannels', { state: 'attached' });
    assert.deepEqual(await page.locator('#f-notifyDiscord option').allTextContents(), ['(default)', 'true', 'false']);

    const c = await h.admin.request('POST', '/tcp/create', {
      body: { name: 'ui-ack', ip: '127.0.0.1', port: '9', state: 'off', notifyStatus: 'on', notifyChannels: 'webhook' },
    });
    assert.equal(c.status, 201, c.text);
    const run = await h.admin.request('GET', '/monitor/run/ui-ack/hide');
    assert.equal(run.body.status, 'DOWN', run.text);
    await rx.waitFor(n + 2);
    await page.evaluate(() => (location.hash = '#/m/tcp/5MIN/ui-ack'));
    await page.waitForSelector('#problem:not([hidden]) #ack');
    await page.fill('#ack-note', 'router replaced, watching');
    await page.click('#ack');
    await page.waitForSelector('#problem .ack-line:text("Acknowledged by admin")');
    assert.match((await page.locator('#problem .ack-line').textContent()) ?? '', /router replaced, watching/);
    await rx.waitFor(n + 3);
    const ack = rx.requests.at(-1)!.body;
    assert.deepEqual(
      [ack.kind, ack.acknowledgement.by, ack.acknowledgement.note],
      ['acknowledge', 'admin', 'router replaced, watching'],
    );
    await shot(page, '21-monitor-acknowledged');
    await page.click('#unack');
    await page.waitForSelector('#problem #ack');
    const list = await h.admin.request('GET', '/alerting/problems?monitor=ui-ack');
    assert.equal(list.body[0].acknowledged, undefined);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});
