/**
 * docs/security.md §3 (review F3, F12): a `user`'s regexes cannot stall the monitor service. Each attack goes through
 * the HTTP API as a `user` against the real service: evil patterns against evil inputs end with their real verdict
 * (RE2 semantics, linear time, off the event loop) while /ping keeps answering, and syntax that needs backtracking
 * is refused at create naming the field. On the code before the fix the api/url runs ended EXCEPTION (vm timeout),
 * the exec run froze the event loop past the monitor's timeout (DOWN), and the refused patterns were stored.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { userClient } from '../support/api.kit.js';
import { startHttpTargets, type HttpTargets } from '../support/http-targets.fixture.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const hasChromium = fs.existsSync('/usr/bin/chromium');
let h: MonitorHarness;
let t: HttpTargets;
let bob: HttpsClient;
let page: http.Server;
let pageUrl: string;

before(async () => {
  if (!hasChromium && process.env.CI === 'true') throw new Error('chromium is missing (apt-get install chromium)');
  [h, t] = await Promise.all([startMonitor(), startHttpTargets()]);
  bob = await userClient(h, 'bob', 'user', 'Bob-pass-123');
  // /evil: the review's F12 body (40 a and '!'); anything else: a page for the exec test.
  page = http.createServer((q, res) =>
    q.url === '/evil'
      ? res.writeHead(200, { 'content-type': 'text/plain' }).end(`${'a'.repeat(40)}!`)
      : res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>'),
  );
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
});
after(async () => {
  await h?.stop();
  await t?.close();
  await new Promise((r) => page?.close(r));
});

const common = { sched: '60MIN', state: 'off', probe: 'p1', display_name: 'x', timeout: '30' };

/** Runs the given monitors at once; pings /ping until they are all done and counts the answers received meanwhile. */
async function runAllWhilePinging(names: string[]) {
  let done = false;
  const runs = Promise.all(names.map((n) => bob.request('GET', `/monitor/run/${n}/show`))).finally(() => {
    done = true;
  });
  let pings = 0;
  while (!done) {
    const p = await bob.request('GET', '/ping', { token: null });
    assert.equal(p.status, 200);
    if (!done) pings++;
  }
  return { results: await runs, pings };
}

test("50 concurrent api/url runs of evil patterns on the review's evil body end with their real verdict; /ping answers meanwhile", async () => {
  // A backtracking engine needs ~2^40 steps per run (the code before the fix stopped each at 200 ms: EXCEPTION).
  const names: string[] = [];
  for (let i = 0; i < 25; i++) {
    const api = { ...common, name: `evil-api-${i}`, api: `${pageUrl}/evil`, typeApi: 'GET', pattern: '^(a+)+$' };
    const url = { ...common, name: `evil-url-${i}`, url: `${pageUrl}/evil`, pattern: '^(a|aa)+$' };
    assert.equal((await bob.request('POST', '/api/create', { body: api })).status, 201);
    assert.equal((await bob.request('POST', '/url/create', { body: url })).status, 201);
    names.push(api.name, url.name);
  }
  const { results, pings } = await runAllWhilePinging(names);
  for (const r of results) {
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.status, 'ERROR', `${r.body.name}: ${r.body.message}`);
    assert.match(r.body.message, /pattern not found in the response body/);
  }
  assert.ok(pings > 0, 'the service answered /ping while the 50 patterns ran');
});

test(
  'exec: an assertUrl pattern that backtracks exponentially passes (RE2) instead of freezing the service',
  { skip: !hasChromium && 'no chromium' },
  async () => {
    // JavaScript's engine needs ~2^30 steps for this URL (the review froze the service 7 s with 27 characters).
    const steps = [
      { action: 'goto', url: `${pageUrl}/${'a'.repeat(30)}!` },
      { action: 'assertUrl', pattern: '^http://127\\.0\\.0\\.1:\\d+/(a+)+$|!$', timeoutMs: 5000 },
      { action: 'assertUrl', url: 'a!' },
    ];
    const c = await bob.request('POST', '/exec/create', {
      body: { ...common, name: 'evil-exec', steps, artifacts: 'never', timeout: '20' },
    });
    assert.equal(c.status, 201, c.text);
    const { results, pings } = await runAllWhilePinging(['evil-exec']);
    assert.equal(results[0]!.body.status, 'OK', results[0]!.text);
    assert.ok(pings > 0, 'the service answered /ping while the run was in progress');
  },
);

test('patterns that need backtracking are refused at create with the field named and what to write instead', async () => {
  const api = await bob.request('POST', '/api/create', {
    body: { ...common, name: 'la', api: `${t.httpUrl}/json`, typeApi: 'GET', pattern: '"temp":(?=\\d)(\\d+)' },
  });
  assert.equal(api.status, 400, api.text);
  assert.equal(api.body.field, 'body.pattern');
  assert.match(api.body.message, /lookahead .* capture group/);
  const url = await bob.request('POST', '/url/create', {
    body: { ...common, name: 'br', url: `${t.httpUrl}/ok`, pattern: '(l)\\1' },
  });
  assert.equal(url.status, 400, url.text);
  assert.equal(url.body.field, 'body.pattern');
  assert.match(url.body.message, /backreferences/);
  const exec = await bob.request('POST', '/exec/create', {
    body: {
      ...common,
      name: 'ex',
      steps: [
        { action: 'goto', url: pageUrl },
        { action: 'assertText', pattern: '(?<=x)y' },
      ],
    },
  });
  assert.equal(exec.status, 400, exec.text);
  assert.equal(exec.body.field, 'body.steps');
  assert.match(exec.body.message, /steps\[1\].*lookbehind/);
});
