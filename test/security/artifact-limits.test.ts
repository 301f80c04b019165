/**
 * docs/security.md §10 (review F11, artifacts): exec artifacts are bounded per run and in total. Through the HTTP API
 * as a `user`: with artifactMaxBytesPerRun just above one screenshot, a run of three screenshots keeps one and lists
 * the others in details.artifactsOverCap, and its folder holds no more than the cap; with artifactMaxBytesTotal about
 * two runs, further runs delete whole run folders, oldest first, until the total fits (the oldest run's screenshot is
 * then 404, the newest downloads). Before the fix both settings were unknown (400) and every run kept everything.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { userClient } from '../support/api.kit.js';
import { startBrowserSite, type BrowserSite } from '../support/browser-site.fixture.js';
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

async function setting(body: Record<string, string>): Promise<void> {
  const r = await h.admin.request('POST', '/updateSetting', { body });
  assert.equal(r.status, 200, r.text);
}

type Art = { file: string; bytes: number };
async function runOnce(): Promise<{ ts: number; artifacts: Art[]; overCap?: string[] }> {
  const r = await bob.request('GET', '/monitor/run/art/show');
  assert.equal(r.body.status, 'OK', r.text.slice(0, 1000));
  return { ts: r.body.ts, artifacts: r.body.details.artifacts, overCap: r.body.details.artifactsOverCap };
}

const dirBytes = (dir: string): number =>
  fs.existsSync(dir) ? fs.readdirSync(dir).reduce((a, f) => a + fs.statSync(path.join(dir, f)).size, 0) : 0;

test(
  'per-run and total artifact caps hold, oldest runs swept first',
  { skip: noChromium && 'no chromium' },
  async () => {
    const steps = [
      { name: 'open', action: 'goto', url: `${site.url}/login` },
      { name: 'one', action: 'screenshot' },
      { name: 'two', action: 'screenshot' },
      { name: 'three', action: 'screenshot' },
    ];
    const c = await bob.request('POST', '/exec/create', {
      body: { name: 'art', steps, artifacts: 'always', har: 'false' },
    });
    assert.equal(c.status, 201, c.text);
    const full = await runOnce();
    assert.equal(full.artifacts.length, 3, JSON.stringify(full.artifacts));
    const runBytes = full.artifacts.reduce((a, x) => a + x.bytes, 0);

    const cap = full.artifacts[0]!.bytes + 16;
    await setting({ artifactMaxBytesPerRun: String(cap) });
    const capped = await runOnce();
    assert.equal(capped.artifacts.length, 1, JSON.stringify(capped));
    assert.equal(capped.overCap?.length, 2, JSON.stringify(capped));
    const root = path.join(h.dataDir, 'artifacts', 'art');
    assert.ok(dirBytes(path.join(root, String(capped.ts))) <= cap, 'the run folder holds no more than the cap');

    await setting({
      artifactMaxBytesPerRun: String(100 * 1024 * 1024),
      artifactMaxBytesTotal: String(Math.floor(runBytes * 2.5)),
    });
    const later: { ts: number; artifacts: Art[] }[] = [];
    for (let i = 0; i < 3; i++) later.push(await runOnce());
    const total = () => fs.readdirSync(root).reduce((a, ts) => a + dirBytes(path.join(root, ts)), 0);
    for (let i = 0; i < 200 && total() > runBytes * 2.5; i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(total() <= runBytes * 2.5, `total ${total()} within ${runBytes * 2.5}`);
    const first = await h.admin.request('GET', `/artifacts/art/${full.ts}/${full.artifacts[0]!.file}`);
    assert.equal(first.status, 404, 'the oldest run was swept');
    const last = later[later.length - 1]!;
    const newest = await h.admin.request('GET', `/artifacts/art/${last.ts}/${last.artifacts[0]!.file}`);
    assert.equal(newest.status, 200, 'the newest run is kept');
  },
);
