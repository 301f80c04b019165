/**
 * A browser (exec) monitor through the service: named secrets referenced from steps, the run's artifacts listed in
 * its result and downloadable, and the download endpoint refusing anything outside the artifact folder.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startBrowserSite, type BrowserSite } from '../support/browser-site.fixture.js';

let h: MonitorHarness;
let site: BrowserSite;

before(async () => {
  if (!fs.existsSync('/usr/bin/chromium') && process.env.CI === 'true')
    throw new Error('chromium is missing (apt-get install chromium)');
  [h, site] = await Promise.all([
    startMonitor(),
    startBrowserSite({ username: 'alice', password: 'pw-from-secret-store' }),
  ]);
});
after(async () => {
  await h?.stop();
  await site?.close();
});

test(
  'an exec monitor logs in with a stored secret; its failure screenshot downloads; traversal is refused',
  { skip: !fs.existsSync('/usr/bin/chromium') && 'no chromium' },
  async () => {
    assert.equal(
      (await h.admin.request('POST', '/secrets/appPassword', { body: { value: 'pw-from-secret-store' } })).status,
      200,
    );
    const listed = await h.admin.request('GET', '/secrets');
    assert.ok(!listed.text.includes('pw-from-secret-store'), 'secret values are never listed');
    const steps = [
      { name: 'open', action: 'goto', url: `${site.url}/login` },
      { name: 'user', action: 'fill', selector: '#username', value: 'alice' },
      { name: 'password', action: 'fill', selector: '#password', value: '{{secret:appPassword}}' },
      { name: 'sign in', action: 'click', selector: 'button[type=submit]' },
      { name: 'not there', action: 'assertVisible', selector: '#never-there', timeoutMs: 1500 },
    ];
    const c = await h.admin.request('POST', '/exec/create', { body: { name: 'tx1', steps, timeout: '60' } });
    assert.equal(c.status, 201, c.text);
    const r = await h.admin.request('GET', '/monitor/run/tx1/show');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'ERROR', r.text);
    assert.match(r.body.message, /not there/);
    assert.ok(!r.text.includes('pw-from-secret-store'), 'the secret never appears in the result');
    assert.equal(
      site.posts.find((p) => p.path === '/login')?.fields.password,
      'pw-from-secret-store',
      'the browser sent the stored secret',
    );
    const shot = (r.body.details.artifacts as Array<{ file: string; kind: string }>).find(
      (a) => a.kind === 'screenshot',
    );
    assert.ok(shot, `a failure screenshot is listed: ${JSON.stringify(r.body.details.artifacts)}`);
    const dl = await h.admin.request('GET', `/artifacts/tx1/${r.body.ts}/${shot.file}`);
    assert.equal(dl.status, 200);
    assert.equal(dl.headers['content-type'], 'image/png');
    assert.deepEqual([...dl.raw.subarray(1, 4)], [0x50, 0x4e, 0x47], 'PNG signature');
    for (const bad of [
      '..%2F..%2Fmonitor-secret.key',
      '%2e%2e',
      'a%00b.png',
      '..',
      `..%2F${r.body.ts}%2F${shot.file}`,
    ]) {
      const res = await h.admin.request('GET', `/artifacts/tx1/${r.body.ts}/${bad}`);
      assert.ok([400, 404].includes(res.status), `${bad} → ${res.status}`);
    }
    assert.equal((await h.admin.request('GET', `/artifacts/..%2F..%2F/${r.body.ts}/${shot.file}`)).status, 404);
    assert.equal((await h.admin.request('GET', `/artifacts/tx1/1/${shot.file}`)).status, 404);
  },
);

test(
  'the network fence applies inside the browser: a denied target is an EXCEPTION naming the policy',
  { skip: !fs.existsSync('/usr/bin/chromium') && 'no chromium' },
  async () => {
    assert.equal(
      (await h.admin.request('POST', '/updateSetting', { body: { networkDeny: '127.0.0.0/8' } })).status,
      200,
    );
    try {
      const steps = [{ name: 'open', action: 'goto', url: `${site.url}/login` }];
      assert.equal(
        (await h.admin.request('POST', '/exec/create', { body: { name: 'tx-fenced', steps, timeout: '30' } })).status,
        201,
      );
      const r = await h.admin.request('GET', '/monitor/run/tx-fenced/show');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.status, 'EXCEPTION', r.text);
      assert.match(r.body.message, /network policy denied 127\.0\.0\.1/);
    } finally {
      await h.admin.request('POST', '/updateSetting', { body: { networkDeny: '169.254.169.254/32' } });
    }
    const open = [
      { name: 'open', action: 'goto', url: `${site.url}/login` },
      { name: 'form', action: 'assertVisible', selector: '#username' },
    ];
    assert.equal(
      (await h.admin.request('POST', '/exec/create', { body: { name: 'tx-open', steps: open, timeout: '30' } })).status,
      201,
    );
    assert.equal(
      (await h.admin.request('GET', '/monitor/run/tx-open/show')).body.status,
      'OK',
      'with the default policy loopback is allowed',
    );
  },
);
