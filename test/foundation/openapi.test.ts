/**
 * The API documentation on the real monitor service: /docs/index.html serves the UI page (its assets load relative
 * to it) and /docs/index.html/json the OpenAPI 3 document, which lists every route of issue 2 with its methods.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMonitor, type MonitorHarness } from '../support/monitor.harness.js';

let h: MonitorHarness;

before(async () => {
  h = await startMonitor();
});
after(async () => h?.stop());

const ISSUE_2_ROUTES: [string, string][] = [
  ['post', '/login'],
  ['post', '/loginComponent'],
  ['post', '/loginComponent1Year'],
  ['post', '/loginComponent15Years'],
  ['get', '/refresh_token'],
  ['get', '/api/users'],
  ['post', '/api/users'],
  ['patch', '/api/users'],
  ['delete', '/api/users/{username}'],
  ['get', '/setting'],
  ['post', '/updateSetting'],
  ['post', '/setsmtpvault'],
  ['get', '/reloadCertificates'],
  ['get', '/getCert'],
  ['get', '/ping'],
  ['get', '/uptime'],
  ['get', '/api/metrics'],
  ['get', '/api/tokens'],
  ['delete', '/api/tokens/{id}'],
];

test('/docs/index.html returns the UI page and its assets resolve relative to it (no token)', async () => {
  const r = await h.admin.request('GET', '/docs/index.html', { token: null });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /text\/html/);
  assert.match(r.text, /swagger-ui/i);
  const refs = [...r.text.matchAll(/(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1]!)
    .filter((u) => !/^(https?:|data:|#)/.test(u));
  assert.ok(refs.length > 0);
  for (const ref of refs) {
    const u = new URL(ref, `${h.url}/docs/index.html`);
    const a = await h.admin.request('GET', u.pathname, { token: null });
    assert.equal(a.status, 200, `${ref} → ${u.pathname}: ${a.status}`);
  }
});

test('/docs/index.html/json is an OpenAPI 3 document listing every route of issue 2', async () => {
  const r = await h.admin.request('GET', '/docs/index.html/json', { token: null });
  assert.equal(r.status, 200);
  const doc = r.body;
  assert.match(doc.openapi, /^3\./);
  assert.equal(typeof doc.info?.title, 'string');
  assert.ok(doc.components?.securitySchemes?.bearer);
  for (const [m, p] of ISSUE_2_ROUTES) {
    const op = doc.paths?.[p]?.[m];
    assert.ok(op, `${m.toUpperCase()} ${p} is documented`);
    assert.ok(op.summary || op.description, `${m.toUpperCase()} ${p} has a summary`);
  }
  // The schemas that validate the requests are the documented ones.
  const login = doc.paths['/login'].post;
  const body = login.requestBody.content['application/json'].schema;
  assert.deepEqual([...body.required].sort(), ['password', 'username']);
  assert.equal(body.additionalProperties, false);
  const upd = doc.paths['/updateSetting'].post.requestBody.content['application/json'].schema;
  for (const k of ['logLevel', 'concurrencyLimit', 'dataRetention', 'autoThreshold', 'autoThresholdRange'])
    assert.ok(upd.properties[k], k);
  assert.ok(doc.paths['/api/users'].post.responses['409'], 'the 409 of POST /api/users is documented');
  assert.ok(!doc.paths['/docs/index.html'], 'the docs page itself is hidden');
});

test("the added result fields (where a result ran: probe, location, instance) are in the document's schemas", async () => {
  const doc = (await h.admin.request('GET', '/docs/index.html/json', { token: null })).body;
  const json = (p: string, m: string) => doc.paths[p][m].responses['200'].content['application/json'].schema;
  const details = json('/getMonitorDetails', 'post');
  const shown = {
    'details recent': details.properties.recent.items.properties,
    'details last': details.properties.last.properties,
    'GET /monitors last': json('/monitors', 'get').items.properties.last.properties,
    'run now': json('/monitor/run/{title}/{show}', 'get').properties,
  };
  for (const [where, props] of Object.entries(shown))
    for (const f of ['probe', 'location', 'instance']) assert.equal(props[f]?.type, 'string', `${where}: ${f}`);
});
