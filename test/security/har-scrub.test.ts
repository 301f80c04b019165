/**
 * docs/security.md §16 (review F16): an exec run's HAR, downloadable by `readonly`, carries no session of the monitored
 * application. Through the HTTP API: a `user`'s exec monitor visits a page that sets SESSIONID (Set-Cookie and an
 * X-Session-Token header the admin names in `harRedactHeaders`), then a page the browser sends the cookie to; a
 * `readonly` account downloads network.har and finds neither value (before the fix: Cookie, Set-Cookie and cookies[]
 * held it). The entries themselves are still there.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { startBrowserSite, type BrowserSite } from '../support/browser-site.fixture.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const SESSION = 'prod-session-7f3a9c';
const noChromium = !fs.existsSync('/usr/bin/chromium');
let h: MonitorHarness;
let site: BrowserSite;
let bob: HttpsClient;
let rita: HttpsClient;

before(async () => {
  if (noChromium && process.env.CI === 'true') throw new Error('chromium is missing (apt-get install chromium)');
  [h, site] = await Promise.all([startMonitor(), startBrowserSite({ sessionId: SESSION })]);
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

test(
  'a HAR downloaded by readonly holds no cookie, Set-Cookie or named session header',
  { skip: noChromium && 'no chromium' },
  async () => {
    const s = await h.admin.request('POST', '/updateSetting', { body: { harRedactHeaders: 'X-Session-Token' } });
    assert.equal(s.status, 200, s.text);
    const steps = [
      { name: 'sign in', action: 'goto', url: `${site.url}/session` },
      { name: 'who', action: 'goto', url: `${site.url}/whoami` },
      { name: 'cookie sent', action: 'assertText', selector: '#who', text: SESSION },
    ];
    const c = await bob.request('POST', '/exec/create', {
      body: { name: 'har-session', steps, har: 'true', artifacts: 'always', timeout: '60' },
    });
    assert.equal(c.status, 201, c.text);
    const r = await bob.request('GET', '/monitor/run/har-session/show');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'OK', r.text);
    const har = (r.body.details.artifacts as { file: string; kind: string }[]).find((a) => a.kind === 'har');
    assert.ok(har, `a HAR is listed: ${JSON.stringify(r.body.details.artifacts)}`);
    const dl = await rita.request('GET', `/artifacts/har-session/${r.body.ts}/${har.file}`);
    assert.equal(dl.status, 200);
    const text = dl.raw.toString('utf8');
    assert.ok(!text.includes(SESSION), 'the session value appears nowhere in the HAR');
    const entries = (JSON.parse(text) as { log: { entries: any[] } }).log.entries;
    const urls = entries.map((e) => String(e.request.url));
    assert.ok(urls.some((u) => u.endsWith('/session')) && urls.some((u) => u.endsWith('/whoami')), urls.join(' '));
    const headers = entries.flatMap((e) => [...e.request.headers, ...e.response.headers]) as {
      name: string;
      value: string;
    }[];
    for (const name of ['cookie', 'set-cookie', 'x-session-token'])
      assert.ok(
        headers.some((x) => x.name.toLowerCase() === name && x.value === '[redacted]'),
        `${name} is present and redacted`,
      );
    for (const e of entries) {
      assert.deepEqual(e.request.cookies, [], 'request cookies[] emptied');
      assert.deepEqual(e.response.cookies, [], 'response cookies[] emptied');
    }
  },
);

test('harRedactHeaders refuses what is not a list of header names', async () => {
  const r = await h.admin.request('POST', '/updateSetting', { body: { harRedactHeaders: 'X-Ok, bad header' } });
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.field, 'body.harRedactHeaders');
});
