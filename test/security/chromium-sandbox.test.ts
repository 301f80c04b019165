/**
 * docs/security.md §12 (review F18): Chromium runs with its sandbox whenever this machine allows it. Through the HTTP
 * API as a `user`: an exec monitor runs OK while its browser is inspected in /proc — the browser's command line has
 * `--no-sandbox` exactly when exec/sandbox.ts's detection says the sandbox is impossible, it runs as the account the
 * detection chose (never root when the service is root), and its renderers are under a seccomp-bpf filter (Seccomp: 2)
 * when sandboxed. The CI runs as root (it installs Debian packages), where user namespaces work for `nobody`: the test
 * requires the sandbox there. Before the fix the browser ran as root with --no-sandbox.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { userClient } from '../support/api.kit.js';
import { startBrowserSite, type BrowserSite } from '../support/browser-site.fixture.js';
import { detectSandbox } from '../../src/monitor/monitor-types/exec/sandbox.js';
import type { HttpsClient } from '../support/https-client.kit.js';

const noChromium = !fs.existsSync('/usr/bin/chromium');
let h: MonitorHarness;
let site: BrowserSite;
let bob: HttpsClient;

before(async () => {
  if (noChromium && process.env.CI === 'true') throw new Error('chromium is missing (apt-get install chromium)');
  [h, site] = await Promise.all([startMonitor(), startBrowserSite()]);
  bob = await userClient(h, 'bob', 'user', 'Bob-pass-1234');
});
after(async () => {
  await h?.stop();
  await site?.close();
});

interface Proc {
  pid: number;
  ppid: number;
  uid: number;
  seccomp: number;
  args: string[];
}

function processes(): Proc[] {
  const out: Proc[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = fs.readFileSync(`/proc/${d}/status`, 'utf8');
      const field = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? -1);
      const args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(d), ppid: field('PPid'), uid: field('Uid'), seccomp: field('Seccomp'), args });
    } catch {
      /* exited */
    }
  }
  return out;
}

/** This process's browser (a child started with the marker flag) and its renderers. */
function ourBrowser(): { browser?: Proc; renderers: Proc[] } {
  const all = processes();
  const browser = all.find(
    (p) => p.ppid === process.pid && p.args.some((a) => a.startsWith('--sentinel-exec-browser=')),
  );
  if (!browser) return { renderers: [] };
  const tree = new Set([browser.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.add(p.pid);
        grew = true;
      }
  }
  // Chromium rewrites its children's command lines into one string: match on the joined text.
  const renderers = all.filter((p) => tree.has(p.pid) && p.args.join(' ').includes('--type=renderer'));
  return { browser, renderers };
}

test(
  'the browser runs as the detection says, sandboxed here, and a run works',
  { skip: noChromium && 'no chromium' },
  async () => {
    const plan = detectSandbox();
    if (process.env.CI === 'true') {
      assert.equal(process.getuid?.(), 0, 'the CI runs as root');
      assert.equal(plan.sandbox, true, `the CI machine allows the sandbox: ${plan.reason}`);
    }
    const steps = [
      { name: 'open', action: 'goto', url: `${site.url}/login` },
      { name: 'form', action: 'assertVisible', selector: '#username' },
      { name: 'hold', action: 'sleep', ms: 3000 },
    ];
    const c = await bob.request('POST', '/exec/create', {
      body: { name: 'sandboxed', steps, artifacts: 'never', har: 'false' },
    });
    assert.equal(c.status, 201, c.text);
    const running = bob.request('GET', '/monitor/run/sandboxed/show');
    let seen: ReturnType<typeof ourBrowser> = { renderers: [] };
    // A renderer enters seccomp-bpf a moment after it starts: sample until the renderers seen are all settled (or
    // the run ends); one that never gets there still fails below.
    const settled = (s: typeof seen) =>
      s.renderers.length > 0 && (!plan.sandbox || s.renderers.every((p) => p.seccomp === 2));
    for (let i = 0; i < 100 && !settled(seen); i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = ourBrowser();
      if (now.renderers.length > 0 || seen.renderers.length === 0) seen = now;
    }
    const r = await running;
    assert.equal(r.body.status, 'OK', r.text);
    const { browser, renderers } = seen;
    assert.ok(browser, 'the browser process was found');
    assert.equal(
      browser.args.includes('--no-sandbox'),
      !plan.sandbox,
      `--no-sandbox iff the sandbox is impossible: ${browser.args.join(' ')}`,
    );
    assert.equal(browser.uid, plan.runAs?.uid ?? process.getuid?.(), 'runs as the account the detection chose');
    if (process.getuid?.() === 0 && plan.sandbox) assert.notEqual(browser.uid, 0, 'never root');
    assert.ok(renderers.length > 0, 'a renderer was seen during the run');
    if (plan.sandbox) for (const p of renderers) assert.equal(p.seccomp, 2, `renderer ${p.pid} is under seccomp-bpf`);
  },
);
