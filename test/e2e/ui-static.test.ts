/** The dashboard's static routes: content types, caching headers (ETag, 304, immutable hashed assets, no-cache
 *  index), compression, CSP, path traversal refused, no token needed; the artifact route needs one. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startUiService, type UiHarness } from './ui.harness.js';
import { safeRelative } from '../../src/monitor/http/ui.routes.js';

describe('dashboard static routes', () => {
  let h: UiHarness;
  before(async () => {
    h = await startUiService();
  });
  after(async () => h?.stop());

  it('serves index.html at / with no-cache, an ETag, CSP and the hashed asset prefix', async () => {
    const r = await h.admin.request('GET', '/', { token: null });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/html; charset=utf-8/);
    assert.equal(r.headers['cache-control'], 'no-cache');
    assert.match(String(r.headers['content-security-policy']), /default-src 'self'/);
    assert.ok(r.headers.etag);
    assert.match(r.text, /<script type="module" src="\/ui\/[\w-]{12}\/app\.js">/);
    const again = await h.admin.request('GET', '/', {
      token: null,
      headers: { 'if-none-match': String(r.headers.etag) },
    });
    assert.equal(again.status, 304);
    assert.equal(again.raw.length, 0);
  });

  it('serves assets immutable under the current hash, with content types and compression', async () => {
    const index = await h.admin.request('GET', '/', { token: null });
    const base = /src="(\/ui\/[\w-]{12}\/)app\.js"/.exec(index.text)![1]!;
    const js = await h.admin.request('GET', `${base}views/overview.js`, { token: null });
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(js.text, fs.readFileSync(path.resolve('web/views/overview.js'), 'utf8'));
    const css = await h.admin.request('GET', `${base}styles.css`, {
      token: null,
      headers: { 'accept-encoding': 'br' },
    });
    assert.equal(css.headers['content-encoding'], 'br');
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.equal(
      zlib.brotliDecompressSync(css.raw).toString('utf8'),
      fs.readFileSync(path.resolve('web/styles.css'), 'utf8'),
    );
    const svg = await h.admin.request('GET', `${base}favicon.svg`, { token: null });
    assert.equal(svg.headers['content-type'], 'image/svg+xml');
    const stale = await h.admin.request('GET', '/ui/oldversion00/app.js', { token: null });
    assert.equal(stale.status, 200);
    assert.equal(stale.headers['cache-control'], 'no-cache');
  });

  it('refuses path traversal and unknown files', async () => {
    for (const p of [
      '/ui/x/../../package.json',
      '/ui/x/..%2f..%2fpackage.json',
      '/ui/x/%2e%2e/%2e%2e/package.json',
      '/ui/x/views/..%2f..%2fsrc%2fmonitor%2fservice.ts',
      '/ui/x/nope.js',
      '/ui/x/tsconfig.json',
      '/ui/x/types.d.ts',
      '/ui/x/%00app.js',
      '/ui/x/.%2fapp.js',
    ]) {
      const r = await h.admin.request('GET', p, { token: null });
      assert.ok(r.status === 404 || r.status === 400, `${p} → ${r.status}`);
      assert.doesNotMatch(r.text, /"dependencies"|createMonitorService/);
    }
    assert.equal(safeRelative('a/../b'), undefined);
    assert.equal(safeRelative('/etc/passwd'), undefined);
    assert.equal(safeRelative('a\\b'), undefined);
    assert.equal(safeRelative('views/form.js'), 'views/form.js');
  });

  it('artifact links the monitor page opens (artifacts.routes.ts) need a token and stay inside the artifact root', async () => {
    const dir = path.join(h.dataDir, 'artifacts', 'shop', '1700000000000');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'step-01-home.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    assert.equal(
      (await h.admin.request('GET', '/artifacts/shop/1700000000000/step-01-home.png', { token: null })).status,
      401,
    );
    const ok = await h.admin.request('GET', '/artifacts/shop/1700000000000/step-01-home.png');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['content-type'], 'image/png');
    assert.deepEqual([...ok.raw], [0x89, 0x50, 0x4e, 0x47]);
    for (const p of [
      '/artifacts/shop/1700000000000/..%2f..%2f..%2fmonitor-secret.key',
      '/artifacts/..%2f..%2fcerts/1/ca-key.pem',
      '/artifacts/shop/1700000000000/missing.png',
    ]) {
      const r = await h.admin.request('GET', p);
      assert.ok([400, 404].includes(r.status), `${p} → ${r.status}`);
    }
  });
});
