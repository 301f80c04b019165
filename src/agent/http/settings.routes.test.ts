/**
 * The settings routes' schemas are derived from the settings definitions (decision 163): a definition added to
 * either record is accepted by POST /updateSetting or /setsmtp, answered, and documented, with no schema written for
 * it; a secret shows only as `<key>Set`. The real agent's OpenAPI document lists exactly the defined keys, and
 * GET /api/setting answers exactly the keys its schema documents.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import Fastify from 'fastify';
import { AJV_OPTIONS } from '../../core/http/app.js';
import { installErrorHandling } from '../../core/http/error-handler.js';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore, type LmdbStore } from '../../core/storage/lmdb-store.js';
import { startAgent } from '../../../test/support/agent.harness.js';
import { AgentSettings } from '../settings.js';
import { registerSettingsRoutes } from './settings.routes.js';

const dirs: string[] = [];
const stores: LmdbStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function freshSettings(): Promise<AgentSettings> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agent-settings-routes-'));
  dirs.push(dir);
  const store = await openLmdbStore({ path: dir, noSync: true });
  stores.push(store);
  return new AgentSettings(store, createSecretBox(randomBytes(32)));
}

type Props = { properties: Record<string, unknown> };
const keys = (schema: unknown) => Object.keys((schema as Props).properties);
const defined = (a: AgentSettings, record: 'settings' | 'smtp') => [...a[record].definitions().keys()];
/** The keys GET /api/setting shows: every defined key, a secret k as `<k>Set`. */
const shown = (a: AgentSettings, record: 'settings' | 'smtp') =>
  [...a[record].definitions()].map(([k, d]) => (d.secret ? `${k}Set` : k));

test('a setting defined on either record is validated, answered and documented by the routes, no schema written', async () => {
  const a = await freshSettings();
  const flag = { default: 'false', description: 'a test setting', validate: (v: string) => v };
  a.settings.define('discoTESTGMonEnabled', flag);
  a.smtp.define('smtpTestToken', { ...flag, default: '', secret: true });
  await a.load();
  const app = Fastify({ ajv: { customOptions: AJV_OPTIONS } });
  installErrorHandling(app);
  const schemas = new Map<string, Record<string, unknown>>();
  app.addHook('onRoute', (r) => void schemas.set(`${String(r.method)} ${r.url}`, r.schema as Record<string, unknown>));
  registerSettingsRoutes(app, { settings: a, checkIntegrators: async () => [] });
  await app.ready();

  const upd = schemas.get('POST /updateSetting')!;
  assert.deepEqual(keys(upd.body), defined(a, 'settings'));
  assert.ok(keys(upd.body).includes('discoTESTGMonEnabled'));
  const ack = (upd.response as Record<number, Props>)[200]!;
  assert.deepEqual(keys(ack.properties.settings), shown(a, 'settings'));
  const smtp = schemas.get('POST /setsmtp')!;
  assert.deepEqual(keys(smtp.body), defined(a, 'smtp'));
  assert.deepEqual(keys((smtp.response as Record<number, Props>)[200]!.properties.smtp), shown(a, 'smtp'));
  assert.ok(shown(a, 'smtp').includes('smtpTestTokenSet') && !shown(a, 'smtp').includes('smtpTestToken'));
  const view = (schemas.get('GET /api/setting')!.response as Record<number, unknown>)[200];
  assert.deepEqual(keys(view), [...shown(a, 'settings'), ...shown(a, 'smtp')]);

  // The derived body accepts the new keys, the derived answers carry them; unknown keys are still refused.
  const r = await app.inject({ method: 'POST', url: '/updateSetting', payload: { discoTESTGMonEnabled: 'true' } });
  assert.equal(r.statusCode, 200, r.body);
  assert.equal(r.json().settings.discoTESTGMonEnabled, 'true');
  const s = await app.inject({ method: 'POST', url: '/setsmtp', payload: { smtpTestToken: 's3cret' } });
  assert.equal(s.statusCode, 200, s.body);
  assert.equal(s.json().smtp.smtpTestTokenSet, 'true');
  assert.ok(!s.body.includes('s3cret'), 'the secret is never answered');
  const got = await app.inject({ method: 'GET', url: '/api/setting' });
  assert.equal(got.json().discoTESTGMonEnabled, 'true');
  assert.equal(got.json().smtpTestTokenSet, 'true');
  const bad = await app.inject({ method: 'POST', url: '/updateSetting', payload: { discoNOPEGMonEnabled: 'true' } });
  assert.equal(bad.statusCode, 400, bad.body);
  assert.match(bad.json().message, /discoNOPEGMonEnabled/);
  await app.close();
});

test("the agent's OpenAPI document lists exactly the defined keys; GET /api/setting answers exactly those", async () => {
  const h = await startAgent();
  try {
    const a = await freshSettings();
    const doc = (await h.admin.request('GET', '/docs/index.html/json', { token: null })).body;
    const body = (p: string) => doc.paths[p].post.requestBody.content['application/json'].schema;
    const ok = (p: string, m: string) => doc.paths[p][m].responses['200'].content['application/json'].schema;
    assert.deepEqual(keys(body('/updateSetting')), defined(a, 'settings'));
    assert.equal(body('/updateSetting').additionalProperties, false);
    assert.deepEqual(keys(ok('/updateSetting', 'post').properties.settings), shown(a, 'settings'));
    assert.deepEqual(keys(body('/setsmtp')), defined(a, 'smtp'));
    assert.equal(body('/setsmtp').additionalProperties, false);
    assert.deepEqual(keys(ok('/setsmtp', 'post').properties.smtp), shown(a, 'smtp'));
    const view = ok('/api/setting', 'get');
    assert.deepEqual(keys(view), [...shown(a, 'settings'), ...shown(a, 'smtp')]);
    assert.deepEqual(Object.keys((await h.admin.request('GET', '/api/setting')).body), keys(view));
    // Spec values stay strings; validators' schemas are documented (e.g. sched's form, the true/false keys).
    for (const [k, s] of Object.entries(view.properties as Record<string, { type: string }>))
      assert.equal(s.type, 'string', k);
    assert.equal(view.properties.sched.pattern, '^[0-9]{1,4}MIN$');
    assert.deepEqual(view.properties.smtpTLS.enum, ['true', 'false']);
  } finally {
    await h.close();
  }
});
