/**
 * The dashboard in headless Chromium (playwright-core + Debian's chromium, mTLS client certificate): log in, create a
 * url monitor through the form (client-side and server-side field errors), watch it turn OK without a reload, its
 * page with the chart drawn, run now, disable; a readonly user sees no write actions; a deleted user's session ends
 * on the login page. Screenshots of each page go to test-output/e2e/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  chromiumAvailable,
  launch,
  newContext,
  startTarget,
  startUiService,
  ADMIN_PASSWORD,
  type UiHarness,
} from './ui.harness.js';

const OUT = path.resolve('test-output/e2e');
const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;

async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
}

async function login(page: Page, url: string, user: string, pass: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.fill('#username', user);
  await page.fill('#password', pass);
  await page.click('button[type=submit]');
  await page.waitForSelector('h1:text("Monitors")');
}

describe('dashboard in Chromium', { skip, timeout: 240_000 }, () => {
  let h: UiHarness;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let browser: Browser;

  before(async () => {
    assert.ok(chromiumAvailable(), 'chromium must exist at /usr/bin/chromium (CI=true)');
    h = await startUiService();
    target = await startTarget();
    browser = await launch();
    const r = await h.admin.request('POST', '/api/users', {
      body: { username: 'viewer', password: 'viewer-pass-1', group: 'readonly' },
    });
    assert.equal(r.status, 201, r.text);
  });
  after(async () => {
    await browser?.close();
    await target?.close();
    await h?.stop();
  });

  it('admin: log in, create through the form, live OK, monitor page with chart, run now, disable', async () => {
    const ctx = await newContext(browser, h);
    await ctx.addInitScript(() => ((window as any).__pollIntervalMs = 1000));
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${h.url}/`);
    await page.waitForSelector('#username');
    await shot(page, '01-login');
    await page.fill('#username', 'admin');
    await page.fill('#password', 'wrong-password');
    await page.click('button[type=submit]');
    await page.waitForSelector('.form-error:text("Wrong user name or password.")');
    await login(page, h.url, 'admin', ADMIN_PASSWORD);
    assert.equal(await page.locator('#topbar .role').textContent(), 'admin');
    await shot(page, '02-overview-empty');

    await page.click('a:text("+ New monitor")');
    await page.waitForSelector('#f-url');
    await page.fill('#f-name', 'web-target');
    await page.fill('#f-display_name', 'Local web target');
    await page.fill('#f-url', 'ftp://nope');
    await page.fill('#f-tags', '[e2e,web]');
    await page.click('button:text("Create monitor")');
    // client-side validation names the field, nothing is sent
    assert.match((await page.locator('#f-url-err').textContent()) ?? '', /http/);
    assert.equal(await page.locator('#f-url').getAttribute('aria-invalid'), 'true');
    await shot(page, '03-form-client-error');
    // a server error {field: "body.url"} lands on that field
    await page.fill('#f-url', target.url);
    await page.route(
      '**/url/create',
      (route) =>
        route.fulfill({
          status: 400,
          contentType: 'application/json',
          body: JSON.stringify({
            code: 400,
            error: 'VALIDATION',
            message: 'url: the server says no',
            field: 'body.url',
          }),
        }),
      { times: 1 },
    );
    await page.click('button:text("Create monitor")');
    await page.waitForSelector('#f-url-err:text("the server says no")');
    await shot(page, '04-form-server-error');
    // the real create
    await page.click('button:text("Create monitor")');
    await page.waitForURL(/#\/m\/url\/5MIN\/web-target$/);
    await page.waitForSelector('h1:text("Local web target")');

    await page.click('a:text("← Monitors")');
    const row = page.locator('.mrow[data-name="web-target"]');
    await row.waitFor();
    assert.equal(await row.getAttribute('data-status'), 'PENDING');
    const run = await h.admin.request('GET', '/monitor/run/web-target/hide');
    assert.equal(run.body.status, 'OK', run.text);
    // the poll worker brings the result in without a reload
    await page.waitForSelector('.mrow[data-name="web-target"][data-status="OK"]', { timeout: 30_000 });
    await shot(page, '05-overview-ok');

    await row.click();
    await page.waitForSelector('canvas.chart[data-drawn="true"]');
    assert.ok(Number(await page.locator('canvas.chart').getAttribute('data-points')) >= 1, 'the chart has points');
    const painted = await page.locator('canvas.chart').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]! > 0) n++;
      return n;
    });
    assert.ok(painted > 500, `chart canvas has drawn pixels (${painted})`);
    await page.waitForSelector('.trend .big');
    await page.click('#run-now');
    await page.waitForSelector('.run-out .pill:text("OK")');
    await page.click('button.seg:text("7d")');
    await page.waitForSelector('canvas.chart[data-drawn="true"]');
    await shot(page, '06-monitor-page');

    await page.click('#toggle-state:text("Disable")');
    await page.waitForSelector('#toggle-state:text("Enable")');
    await page.waitForSelector('.title-row .pill:text("Disabled")');
    const list = await h.admin.request('GET', '/monitors');
    assert.equal(list.body.find((m: any) => m.name === 'web-target').state, 'off');
    await shot(page, '07-monitor-disabled');

    await page.click('#edit');
    await page.waitForSelector('#f-name[disabled]');
    assert.equal(await page.locator('#f-url').inputValue(), target.url);
    await shot(page, '08-edit-form');

    await page.goto(`${h.url}/#/admin/users`);
    await login(page, h.url, 'admin', ADMIN_PASSWORD).catch(() => undefined); // a reload forgets the in-memory token
    await page.evaluate(() => (location.hash = '#/admin/users'));
    await page.waitForSelector('td:text("viewer")');
    await shot(page, '09-admin-users');
    await page.click('a.tab:text("Settings")');
    await page.waitForSelector('#a-dataRetention');
    await shot(page, '10-admin-settings');

    await page.setViewportSize({ width: 390, height: 800 });
    await page.evaluate(() => (location.hash = '#/'));
    await page.waitForSelector('.mrow[data-name="web-target"]');
    await shot(page, '11-overview-phone');
    await page.click('#logout');
    await page.waitForSelector('#username');
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  it('dependants whose alerts a failing parent suppressed are grouped under it, indented (router → switch → 2)', async () => {
    const tcp = (name: string, extra: Record<string, string> = {}) =>
      h.admin.request('POST', '/tcp/create', {
        body: { name, ip: '127.0.0.1', port: '9', state: 'off', ...extra },
      });
    assert.equal((await tcp('dep-router')).status, 201);
    assert.equal((await tcp('dep-switch', { parents: '[dep-router]' })).status, 201);
    for (const n of ['dep-a', 'dep-b']) assert.equal((await tcp(n, { parents: '[dep-switch]' })).status, 201);
    // "aaa-alone" sorts before the group by name and fails too, but has no parent: it stays at the top level. (All are
    // disabled — run on demand only — so they sort by name within one status rank.)
    assert.equal((await tcp('aaa-alone')).status, 201);
    for (const n of ['dep-router', 'dep-switch', 'dep-a', 'dep-b', 'aaa-alone']) {
      const r = await h.admin.request('GET', `/monitor/run/${n}/show`);
      assert.equal(r.body.status, 'DOWN', `${n}: ${r.text}`);
    }
    const list = (await h.admin.request('GET', '/monitors')).body as Array<{
      name: string;
      last?: { suppressedBy?: string };
    }>;
    assert.equal(
      list.find((m) => m.name === 'dep-a')?.last?.suppressedBy,
      'dep-switch',
      'GET /monitors says which parent',
    );
    assert.equal(list.find((m) => m.name === 'dep-router')?.last?.suppressedBy, undefined);

    const ctx = await newContext(browser, h);
    await ctx.addInitScript(() => ((window as any).__pollIntervalMs = 1000));
    const page = await ctx.newPage();
    await login(page, h.url, 'admin', ADMIN_PASSWORD);
    await page.waitForSelector('.mrow[data-name="dep-b"][data-depth="2"]', { timeout: 30_000 });
    const rows = await page.$$eval('.vl .mrow', (els) =>
      els
        .map((e) => ({
          name: (e as HTMLElement).dataset.name!,
          depth: (e as HTMLElement).dataset.depth!,
          top: e.getBoundingClientRect().top,
        }))
        .sort((a, b) => a.top - b.top)
        .map((r) => `${r.name}:${r.depth}`),
    );
    assert.deepEqual(
      rows.filter((r) => /^(dep-|aaa-)/.test(r)),
      ['aaa-alone:0', 'dep-router:0', 'dep-switch:1', 'dep-a:2', 'dep-b:2'],
    );
    assert.match((await page.locator('.mrow[data-name="dep-a"] .m-sub').textContent()) ?? '', /dep-switch is failing/);
    assert.match(
      (await page.locator('.mrow[data-name="dep-router"] .m-sub').textContent()) ?? '',
      /1 dependant failing/,
    );
    await shot(page, '13-overview-dependants');
    await ctx.close();
  });

  it('the cluster page shows this instance holding every shard (single mode) and no unassigned monitors', async () => {
    const ctx = await newContext(browser, h);
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await login(page, h.url, 'admin', ADMIN_PASSWORD);
    await page.click('#topbar a.nav:text("Cluster")');
    await page.waitForSelector('#cluster-members tbody tr[data-member]');
    const api = (await h.admin.request('GET', '/cluster')).body as {
      members: Array<{ id: string; shardCount: number }>;
    };
    assert.equal(await page.locator('#cluster-members tbody tr').count(), 1);
    const row = page.locator(`#cluster-members tr[data-member="${api.members[0]!.id}"]`);
    assert.match((await row.textContent()) ?? '', /this instance/);
    assert.match((await row.textContent()) ?? '', new RegExp(`${api.members[0]!.shardCount}`));
    assert.match((await row.textContent()) ?? '', /\+?0\.0 s/, 'the clock offset column (single mode: 0)');
    assert.equal(await row.locator('td.clock-skewed').count(), 0);
    assert.match((await page.locator('#cluster-mode').textContent()) ?? '', /One process on the embedded store/);
    await page.waitForSelector('#cluster-none-unassigned');
    await shot(page, '14-cluster');
    assert.deepEqual(errors, []);
    await ctx.close();
  });

  it('readonly user sees no write actions; a deleted user is sent back to the login page', async () => {
    const ctx = await newContext(browser, h);
    await ctx.addInitScript(() => ((window as any).__pollIntervalMs = 1000));
    const page = await ctx.newPage();
    await login(page, h.url, 'viewer', 'viewer-pass-1');
    assert.equal(await page.locator('#topbar .role').textContent(), 'readonly');
    await page.waitForSelector('.mrow[data-name="web-target"]');
    assert.equal(await page.locator('a:text("+ New monitor")').count(), 0);
    assert.equal(await page.locator('#topbar a.nav:text("Admin")').count(), 0);
    assert.equal(await page.locator('#topbar a.nav:text("New")').count(), 0);
    await page.click('.mrow[data-name="web-target"]');
    await page.waitForSelector('canvas.chart[data-drawn="true"]');
    for (const sel of ['#run-now', '#toggle-state', '#edit', '#delete'])
      assert.equal(await page.locator(sel).count(), 0, sel);
    await shot(page, '12-readonly-monitor');

    const del = await h.admin.request('DELETE', '/api/users/viewer');
    assert.equal(del.status, 200);
    await page.waitForSelector('#username', { timeout: 30_000 });
    assert.match((await page.locator('.form-error').textContent()) ?? '', /log in again/);
    await ctx.close();
  });
});
