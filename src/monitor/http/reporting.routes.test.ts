import { AJV_OPTIONS } from '../../core/http/app.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readdir } from 'node:fs/promises';
import Fastify from 'fastify';
import { installErrorHandling } from '../../core/http/error-handler.js';
import { openLmdbStore, restoreLmdbBackup } from '../../core/storage/lmdb-store.js';
import { createHistoryService } from '../history/history.service.js';
import { createDbAdmin } from '../reporting/db-backup.js';
import { densify, rollupOf } from '../history/rollup.js';
import { fixture, silent } from '../history/history.kit.js';
import { registerReportingRoutes } from './reporting.routes.js';
import { registerDbRoutes } from './db.routes.js';
import { HOUR_MS } from '../../core/time.js';

const T0 = Date.UTC(2026, 0, 10, 0, 0);

test('reporting routes: answers, 400 for bad ranges and dbnames, 404 for unknown monitors', async () => {
  const f = await fixture({}, T0 + 2 * HOUR_MS);
  const app = Fastify({ ajv: { customOptions: AJV_OPTIONS } });
  installErrorHandling(app);
  try {
    for (let i = 0; i < 120; i++)
      f.history.append('url', 'site', { ts: T0 + i * 60_000, status: i < 60 ? 'OK' : 'DOWN', responseTimeMs: 10 });
    registerReportingRoutes(app, { history: f.history, monitorExists: (db, name) => db === 'url' && name === 'site' });
    const tl = await app.inject({ method: 'POST', url: `/timelineGraph/url/site/${T0}/${T0 + 2 * HOUR_MS}` });
    assert.equal(tl.statusCode, 200);
    assert.deepEqual(tl.json().sharePct, { OK: 50, DOWN: 50 });
    const hg = await app.inject({ method: 'POST', url: `/histGraph/url/site/${T0}/${T0 + HOUR_MS}?points=12` });
    assert.equal(hg.statusCode, 200);
    assert.equal(hg.json().t.length, 12);
    const tr = await app.inject({ method: 'GET', url: '/getTrend/url/site' });
    assert.equal(tr.json()['24h'].availabilityPct, 50);
    const codes = async (method: 'GET' | 'POST', url: string): Promise<number> =>
      (await app.inject({ method, url })).statusCode;
    assert.equal(await codes('POST', `/timelineGraph/url/site/abc/${T0}`), 400);
    assert.equal(await codes('POST', `/timelineGraph/url/site/${T0 + 10}/${T0}`), 400);
    assert.equal(await codes('POST', `/histGraph/url/site/${T0}/${T0 + 10}?points=x`), 400);
    assert.equal(await codes('POST', `/histGraph/nope/site/${T0}/${T0 + 10}`), 400);
    assert.equal(await codes('GET', '/getTrend/nope/site'), 400);
    assert.equal(await codes('GET', '/getTrend/url/other'), 404);
    assert.equal(await codes('POST', `/timelineGraph/tcp/site/${T0}/${T0 + 10}`), 404);
  } finally {
    await app.close();
    await f.cleanup();
  }
});

test('db routes: stats, buckets, backup under concurrent writes restores consistently; bad names → 400', async () => {
  const f = await fixture({}, T0 + 30 * HOUR_MS);
  const app = Fastify({ ajv: { customOptions: AJV_OPTIONS } });
  installErrorHandling(app);
  try {
    registerDbRoutes(app, { db: createDbAdmin({ store: f.store, dataDir: f.dir }) });
    for (let i = 0; i < 2000; i++)
      f.history.append('url', 'a', { ts: T0 + i * 30_000, status: i % 7 ? 'OK' : 'MINOR', responseTimeMs: i % 97 });
    await f.history.flush();
    const stats = (await app.inject({ method: 'GET', url: '/v1/db/exec/stats' })).json();
    assert.equal(stats.buckets.find((b: { name: string }) => b.name === 'hist.raw').keys, 17);
    assert.ok((await app.inject({ method: 'GET', url: '/v1/db/exec/buckets' })).json().buckets.includes('hist.day'));

    // Writers keep going while the backup runs.
    let stop = false;
    let written = 2000;
    const writer = (async () => {
      while (!stop) {
        for (let j = 0; j < 200; j++, written++) {
          f.history.append('url', 'a', { ts: T0 + written * 30_000, status: 'OK', responseTimeMs: 5 });
          f.history.append('tcp', `m${written % 5}`, { ts: T0 + written * 30_000, status: 'OK', responseTimeMs: 5 });
        }
        await f.history.flush();
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    const res = await app.inject({ method: 'POST', url: '/backupDatabase', payload: { database: 'url' } });
    stop = true;
    await writer;
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.match(body.file, /^url-\d{8}-\d{6}-[0-9a-f]{6}\.mdb$/);
    assert.deepEqual(await readdir(join(f.dir, 'backups')), [body.file]);

    const restoredDir = join(f.dir, 'restored');
    await restoreLmdbBackup(body.path, restoredDir);
    const store = await openLmdbStore({ path: restoredDir, noSync: true });
    const history = await createHistoryService({
      store,
      log: silent,
      retentionHours: () => 1e6,
      clock: () => T0 + 30 * HOUR_MS,
    });
    try {
      const rows = await history.rows('url', 'a', 0, Infinity);
      assert.ok(rows.length >= 2000, `restored ${rows.length}`);
      assert.deepEqual(
        rows.slice(0, 2000).map((r) => r.ts),
        Array.from({ length: 2000 }, (_, i) => T0 + i * 30_000),
      );
      // Consistent across buckets: every chunk has its rollup, and latest matches the newest raw row.
      const hours = await history.hourRows('url', 'a', 0, Infinity);
      const rollups = await history.hourRollups('url', 'a', 0, Infinity);
      assert.equal(hours.length, rollups.length);
      hours.forEach((h, i) => assert.deepEqual(densify(rollups[i]!.rollup), rollupOf(h.rows)));
      assert.equal(history.latest('url', 'a')!.ts, rows[rows.length - 1]!.ts);
    } finally {
      await history.close();
      await store.close();
    }
    for (const database of ['../etc', 'url/../x', 'nope', 5, '']) {
      const bad = await app.inject({ method: 'POST', url: '/backupDatabase', payload: { database } });
      assert.equal(bad.statusCode, 400, String(database));
    }
    assert.equal((await app.inject({ method: 'POST', url: '/backupDatabase', payload: {} })).statusCode, 400);
  } finally {
    await app.close();
    await f.cleanup();
  }
});
