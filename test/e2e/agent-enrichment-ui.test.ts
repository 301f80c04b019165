/**
 * Issue 18 in the dashboard (headless Chromium): Admin → Agents lists the registered agent (url, hosts, "token
 * stored", never the token) and registers one through the form; a tcp monitor whose runs are slow (threshMin 0) shows
 * on its page what the agent found ("fake-ui listening") next to the run. Real monitor and agent on one DATA_DIR.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { adminPage, chromiumAvailable, launch, startUiService, type UiHarness } from './ui.harness.js';
import { startAgent, HARNESS_ADMIN_PW, type AgentHarness } from '../support/agent.harness.js';
import { startNamedListener } from '../support/port-listener.fixture.js';

const skip = !chromiumAvailable() && process.env.CI !== 'true' ? 'chromium not found at /usr/bin/chromium' : false;

describe('agents and enrichment in the dashboard', { skip, timeout: 240_000 }, () => {
  let h: UiHarness;
  let agent: AgentHarness;
  let browser: Browser;
  let child: ChildProcess;

  before(async () => {
    h = await startUiService({ env: { ENRICH_WAIT_MS: '0' } });
    agent = await startAgent({}, { DATA_DIR: h.dataDir });
    const { proc, port } = await startNamedListener('fake-ui');
    child = proc;
    const t = await agent.admin.request('POST', '/loginComponent1Year', {
      body: { username: 'admin', password: HARNESS_ADMIN_PW },
      token: null,
    });
    assert.equal(t.status, 200, t.text);
    const r = await h.admin.request('POST', '/agents/local', {
      body: { url: agent.url, hosts: ['127.0.0.1'], token: t.body.token },
    });
    assert.equal(r.status, 201, r.text);
    const body = { name: 'ui-port', ip: '127.0.0.1', port: String(port), state: 'off', threshMin: '0' };
    assert.equal((await h.admin.request('POST', '/tcp/create', { body })).status, 201);
    assert.equal((await h.admin.request('GET', '/monitor/run/ui-port/show')).body.status, 'MINOR');
    // The enrichment lands after the result (ENRICH_WAIT_MS 0: nothing waits for it); the page polls for it below.
    browser = await launch();
  });
  after(async () => {
    child?.kill('SIGKILL');
    await browser?.close();
    await h?.stop({ keepData: true });
    await agent?.close();
  });

  it('Admin → Agents lists and registers agents without showing tokens; the monitor page shows the finding', async () => {
    const { page, errors } = await adminPage(browser, h);

    await page.goto(`${h.url}/#/admin/agents`);
    await page.waitForSelector('#agents li.agent');
    const row = (await page.locator('#agents li.agent').first().textContent()) ?? '';
    assert.match(row, /local/);
    assert.match(row, /token stored/);
    assert.ok(!row.includes('eyJ'), row);
    await page.fill('#a-new-name', 'other');
    await page.fill('#a-new-url', 'https://127.0.0.9:8070');
    await page.fill('#a-new-hosts', 'db-9, 127.0.0.9');
    await page.fill('#a-new-token', 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln');
    await page.click('button:text("Register agent")');
    await page.waitForSelector('#agents li.agent:has-text("other")');
    const listed = await h.admin.request('GET', '/agents/other');
    assert.deepEqual(listed.body.hosts, ['db-9', '127.0.0.9']);

    // The monitor page (the session lives in the page: navigate by hash): open it again until the enrichment,
    // written just after the run, is there.
    let text = '';
    for (let i = 0; i < 30 && !/fake-ui/.test(text); i++) {
      await page.evaluate(() => (location.hash = '#/'));
      await page.waitForSelector('h1:text("Monitors")');
      await page.evaluate(() => (location.hash = '#/m/tcp/5MIN/ui-port'));
      await page.waitForSelector('.run');
      text = (await page.locator('#agent-found').textContent()) ?? '';
    }
    assert.match(text, /What the agent found/);
    assert.match(text, new RegExp(`fake-ui \\(pid ${child.pid}, user .*\\) listening`));
    assert.match((await page.locator('.run-agent').first().textContent()) ?? '', /fake-ui/);
    assert.deepEqual(errors, []);
    await page.context().close();
  });
});
