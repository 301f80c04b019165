/**
 * exec monitors end to end: Debian chromium (playwright-core) and firefox-esr (puppeteer-core over BiDi) against the
 * local site fixture and the local Vault KV v2 fixture. A missing browser skips without CI and fails with CI=true.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as OTPAuth from 'otpauth';
import { startBrowserSite, type BrowserSite } from '../../../test/support/browser-site.fixture.js';
import { startVaultKv2, type VaultKv2 } from '../../../test/support/vault-kv2.fixture.js';
import { createExecType, type ExecTypeHandle } from './exec.js';
import { browserSkip, isWebm, makeContext, pngSize } from './exec/testing.js';
import type { CheckResult } from './types.js';

const SEED = new OTPAuth.Secret({ size: 20 }).base32;
const PASSWORD = 'correct horse battery';
const secrets = { siteUser: 'alice', sitePass: PASSWORD, siteTotp: SEED };

let site: BrowserSite;
let vault: VaultKv2;
let exec: ExecTypeHandle;
const dirs: string[] = [];

function artifactDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'exec-art-'));
  dirs.push(d);
  return join(d, 'run');
}

function loginSteps(base: string): object[] {
  return [
    { name: 'open login', action: 'goto', url: `${base}/login` },
    { name: 'user', action: 'fill', selector: '#username', value: '{{secret:siteUser}}' },
    { name: 'password', action: 'fill', selector: '#password', value: '{{secret:sitePass}}' },
    { name: 'sign in', action: 'click', selector: 'role=button[name="Sign in"]' },
    { name: 'on totp page', action: 'assertUrl', url: '/totp' },
    { name: 'code', action: 'totp', selector: '#code', secret: 'siteTotp' },
    { name: 'verify', action: 'press', selector: '#code', key: 'Enter' },
    { name: 'report shows', action: 'waitFor', selector: '#report' },
    { name: 'report text', action: 'assertText', selector: '#report', text: 'Report ready' },
  ];
}

async function run(
  config: Record<string, unknown>,
  opts: { timeoutMs?: number; dir?: string; settings?: Record<string, string>; secrets?: Record<string, string> } = {},
) {
  const ctx = makeContext({
    timeoutMs: opts.timeoutMs ?? 30_000,
    artifactDir: opts.dir,
    secrets: opts.secrets ?? secrets,
    settings: opts.settings,
  });
  const stored = Object.fromEntries(
    Object.entries(config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
  try {
    return await exec.type.check({ name: 't', type: 'exec', ...stored }, ctx);
  } finally {
    ctx.dispose();
  }
}

const files = (r: CheckResult) => (r.details?.artifacts as { file: string; kind: string }[]).map((a) => a.file);

before(async () => {
  site = await startBrowserSite({ password: PASSWORD, totpSeed: SEED, reportDelayMs: 800 });
  vault = await startVaultKv2({
    token: 'vt-123',
    secrets: { secret: { 'site/login': [{ username: 'alice', password: PASSWORD }] } },
  });
  exec = createExecType({ poolOptions: { maxRunsPerBrowser: 50 } });
});

after(async () => {
  await exec?.close();
  await site?.close();
  await vault?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('exec on chromium', { skip: browserSkip('/usr/bin/chromium') }, () => {
  test('login → TOTP → dashboard passes, with timings, PNG, HAR and webm', async () => {
    const dir = artifactDir();
    const steps = [
      ...loginSteps(site.url),
      { name: 'grab', action: 'extract', selector: '#report', as: 'report' },
      { action: 'select', selector: '#range', value: '24h' },
      { action: 'check', selector: '#live' },
      { action: 'hover', selector: '#menu' },
      { action: 'assertVisible', selector: '#logout' },
      { name: 'Final view', action: 'screenshot' },
    ];
    const r = await run({ steps, artifacts: 'always', video: 'true', har: 'true' }, { dir });
    assert.equal(r.outcome, 'up', r.message);
    const st = r.details?.steps as { status: string; name: string }[];
    assert.equal(st.length, steps.length);
    assert.ok(st.every((s) => s.status === 'passed'));
    assert.match((r.details?.extracted as Record<string, string>).report!, /42 hosts up/);
    const navs = r.details?.navigations as { url: string; ttfbMs?: number; loadMs?: number; lcpMs?: number }[];
    assert.deepEqual(
      navs.map((n) => new URL(n.url).pathname),
      ['/login', '/totp', '/dashboard'],
    );
    for (const n of navs) assert.equal(typeof n.loadMs, 'number');
    assert.ok(
      navs.some((n) => typeof n.lcpMs === 'number'),
      'chromium reports LCP',
    );
    assert.equal(r.metrics?.navigations, 3);
    assert.equal(r.responseTimeMs, r.metrics?.totalMs);

    const names = files(r);
    assert.ok(names.includes('step-15-final-view.png'), names.join());
    assert.deepEqual(pngSize(join(dir, 'step-15-final-view.png')), { width: 1280, height: 720 });
    assert.ok(isWebm(join(dir, 'video.webm')), 'video is a webm (EBML header)');
    const har = JSON.parse(readFileSync(join(dir, 'network.har'), 'utf8')) as {
      log: { entries: { request: { method: string; url: string } }[] };
    };
    const seen = har.log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname}`);
    for (const want of ['GET /login', 'POST /login', 'GET /totp', 'POST /totp', 'GET /dashboard'])
      assert.ok(seen.includes(want), seen.join());
    // The site got the real password; nothing the monitor produced contains it.
    assert.equal(site.posts.find((p) => p.path === '/login')?.fields.password, PASSWORD);
    assert.ok(!readFileSync(join(dir, 'network.har'), 'utf8').includes('horse'), 'HAR is scrubbed');
    assert.ok(!JSON.stringify(r).includes('horse') && !JSON.stringify(r).includes(SEED));
  });

  test('a failed assertion is error naming the step, with a failure screenshot; later steps skipped', async () => {
    const dir = artifactDir();
    const steps = [
      ...loginSteps(site.url),
      { name: 'wrong text', action: 'assertText', selector: '#report', text: 'Report failed', timeoutMs: 1000 },
      { action: 'screenshot' },
    ];
    const r = await run({ steps, artifacts: 'on-failure' }, { dir });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /step 10 "wrong text" \(assertText\): text "Report failed" not found/);
    const st = r.details?.steps as { status: string; screenshot?: string }[];
    assert.equal(st[9]!.status, 'failed');
    assert.equal(st[10]!.status, 'skipped');
    assert.equal(st[9]!.screenshot, 'step-10-wrong-text-failure.png');
    assert.deepEqual(pngSize(join(dir, st[9]!.screenshot)), { width: 1280, height: 720 });
    assert.ok(files(r).includes('network.har'), 'on-failure keeps the HAR');
    assert.equal(r.details?.failedStep, 9);
  });

  test('a closed port is down; HTTP 500 is error', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const down = await run({ steps: [{ action: 'goto', url: `http://127.0.0.1:${port}/` }], artifacts: 'never' });
    assert.equal(down.outcome, 'down');
    assert.match(down.message ?? '', /ERR_CONNECTION_REFUSED/);
    const err = await run({ steps: [{ action: 'goto', url: `${site.url}/boom` }], artifacts: 'never' });
    assert.equal(err.outcome, 'error');
    assert.match(err.message ?? '', /HTTP 500/);
  });

  test('exceeding the monitor timeout is down and names the step', async () => {
    const steps = [
      { action: 'goto', url: `${site.url}/login` },
      { name: 'never', action: 'waitFor', selector: '#nothing-like-this' },
    ];
    const r = await run({ steps, artifacts: 'never' }, { timeoutMs: 3_000 });
    assert.equal(r.outcome, 'down');
    assert.match(r.message ?? '', /step 2 "never".*timed out/);
  });

  test('credentials from Vault KV v2 over HTTPS, cached; a bad token is exception', async () => {
    const steps = loginSteps(site.url).map((s) => {
      const v = (s as { value?: string }).value;
      return v === '{{secret:siteUser}}'
        ? { ...s, value: '{{vault:secret/site/login#username}}' }
        : v === '{{secret:sitePass}}'
          ? { ...s, value: '{{vault:secret/site/login#password}}' }
          : s;
    });
    const settings = { vaultAddr: vault.addr, vaultCaCert: vault.caPem };
    const before = vault.requests.length;
    const r = await run({ steps, artifacts: 'never' }, { settings, secrets: { ...secrets, vaultToken: 'vt-123' } });
    assert.equal(r.outcome, 'up', r.message);
    assert.equal(vault.requests.length - before, 1, 'two keys of one secret: one request');
    assert.equal(vault.requests.at(-1)?.path, '/v1/secret/data/site/login');
    exec.vault.clear();
    const bad = await run({ steps, artifacts: 'never' }, { settings, secrets: { ...secrets, vaultToken: 'wrong' } });
    assert.equal(bad.outcome, 'exception');
    assert.match(bad.message ?? '', /step 2 "user".*HTTP 403 \(permission denied\)/);
    assert.ok(!bad.message?.includes('wrong'));
  });

  test('on success with artifacts on-failure only explicit screenshots stay', async () => {
    const dir = artifactDir();
    const r = await run(
      {
        steps: [
          { action: 'goto', url: `${site.url}/login` },
          { name: 'shot', action: 'screenshot', fullPage: true },
        ],
        artifacts: 'on-failure',
        video: 'true',
      },
      { dir },
    );
    assert.equal(r.outcome, 'up', r.message);
    assert.deepEqual(files(r), ['step-02-shot.png']);
  });

  test('each run starts clean (no cookies from the last run) and records its own HAR', async () => {
    const first = artifactDir();
    const r1 = await run({ steps: loginSteps(site.url), artifacts: 'always' }, { dir: first });
    assert.equal(r1.outcome, 'up', r1.message);
    const second = artifactDir();
    const steps = [
      { action: 'goto', url: `${site.url}/dashboard` },
      { name: 'bounced', action: 'assertUrl', url: '/login' },
    ];
    const r2 = await run({ steps, artifacts: 'always' }, { dir: second });
    assert.equal(r2.outcome, 'up', r2.message);
    const har = JSON.parse(readFileSync(join(second, 'network.har'), 'utf8')) as {
      log: { entries: { request: { method: string; url: string } }[] };
    };
    const seen = har.log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname}`);
    assert.deepEqual(seen, ['GET /dashboard', 'GET /login']);
  });

  test('the browser is reused; a crashed browser is exception and the next run relaunches', async () => {
    const launched = exec.pool.launchCount;
    await run({ steps: [{ action: 'goto', url: `${site.url}/login` }], artifacts: 'never' });
    assert.equal(exec.pool.launchCount, launched, 'no new launch');
    const steps = [
      { action: 'goto', url: `${site.url}/login` },
      { action: 'sleep', ms: 5_000 },
      { action: 'click', selector: '#username' },
    ];
    const pending = run({ steps, artifacts: 'never' });
    await new Promise((r) => setTimeout(r, 1_500));
    const pids = await exec.pool.acquire('chromium', false).then(async (l) => (await l.release(), l.browser.pid));
    assert.ok(pids, 'browser pid known');
    process.kill(pids, 'SIGKILL');
    const r = await pending;
    assert.equal(r.outcome, 'exception', r.message);
    const again = await run({ steps: [{ action: 'goto', url: `${site.url}/login` }], artifacts: 'never' });
    assert.equal(again.outcome, 'up', again.message);
    assert.ok(exec.pool.launchCount > launched);
  });
});

describe('exec on firefox (puppeteer-core, WebDriver BiDi)', { skip: browserSkip('/usr/bin/firefox-esr') }, () => {
  test('login → TOTP → dashboard passes with a screenshot; video and HAR reported unsupported', async () => {
    const dir = artifactDir();
    const steps = [...loginSteps(site.url), { name: 'done', action: 'screenshot' }];
    const r = await run(
      { steps, browser: 'firefox', viewport: '1024x640', artifacts: 'always', video: 'true', har: 'true' },
      { dir, timeoutMs: 60_000 },
    );
    assert.equal(r.outcome, 'up', r.message);
    assert.deepEqual(pngSize(join(dir, 'step-10-done.png')), { width: 1024, height: 640 });
    assert.deepEqual(r.details?.unsupported, ['video', 'har']);
    const navs = r.details?.navigations as { url: string; loadMs?: number }[];
    assert.deepEqual(
      navs.map((n) => new URL(n.url).pathname),
      ['/login', '/totp', '/dashboard'],
    );
  });

  test('a failed assertion is error with a failure screenshot', async () => {
    const dir = artifactDir();
    const steps = [
      { action: 'goto', url: `${site.url}/login` },
      { name: 'title', action: 'assertText', selector: 'h1', text: 'Welcome', timeoutMs: 800 },
    ];
    const r = await run({ steps, browser: 'firefox', artifacts: 'on-failure' }, { dir, timeoutMs: 60_000 });
    assert.equal(r.outcome, 'error');
    assert.match(r.message ?? '', /step 2 "title"/);
    assert.ok(pngSize(join(dir, 'step-02-title-failure.png')));
  });
});
