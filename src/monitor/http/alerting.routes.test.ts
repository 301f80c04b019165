import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { installErrorHandling } from '../../core/http/error-handler.js';
import { createChannelRegistry } from '../../core/notify/registry.js';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { makeTestTls, startWebhookReceiver } from '../../../test/fixtures/webhook-receivers.js';
import { createAlertingService } from '../alerting/alerting.service.js';
import { registerAlertingRoutes } from './alerting.routes.js';

test('alerting routes: channels (masked), test send, deliveries, maintenance CRUD, 400/404', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'alert-routes-'));
  const store = await openLmdbStore({ path: dir, noSync: true });
  const tls = makeTestTls();
  const rx = await startWebhookReceiver(tls);
  const alerting = createAlertingService({
    store,
    log: pino({ level: 'silent' }),
    secrets: createSecretBox(randomBytes(32)),
    channels: createChannelRegistry({ agent: tls.agent }),
  });
  await alerting.start();
  const app = Fastify();
  installErrorHandling(app);
  registerAlertingRoutes(app, { alerting });
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, payload });
  try {
    const hook = `${rx.url}/services/T/B/topsecret`;
    const set = await call('POST', '/alerting/channels/slack', { enabled: 'true', webhookUrl: hook });
    assert.equal(set.statusCode, 200);
    assert.deepEqual(set.json(), { enabled: 'true', webhookUrl: 'set' });
    const all = await call('GET', '/alerting/channels');
    assert.equal(all.statusCode, 200);
    assert.ok(!all.body.includes('topsecret'));
    assert.deepEqual(Object.keys(all.json()).sort(), ['email', 'pagerduty', 'slack', 'teams']);
    const bad = await call('POST', '/alerting/channels/teams', { webhookUrl: 'http://insecure' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().field, 'body.webhookUrl');
    assert.equal((await call('POST', '/alerting/channels/fax', { enabled: 'true' })).statusCode, 404);

    const t = await call('POST', '/alerting/channels/slack/test');
    assert.equal(t.statusCode, 200);
    assert.equal(t.json().ok, true);
    assert.match(rx.requests.at(-1)!.body.text, /TEST/);

    alerting.onResult({ name: 'web', type: 'url', notifyStatus: 'on' }, 'DOWN');
    await alerting.idle();
    const d = await call('GET', '/alerting/deliveries?limit=5');
    assert.equal(d.statusCode, 200);
    assert.deepEqual(
      d.json().map((x: any) => [x.channel, x.monitor, x.outcome, x.attempts]),
      [['slack', 'web', 'delivered', 1]],
    );

    const w = await call('POST', '/maintenance', {
      name: 'nightly',
      cron: '0 3 * * *',
      durationMinutes: '30',
      timezone: 'UTC',
      tags: 'db',
    });
    assert.equal(w.statusCode, 200, w.body);
    const id = w.json().id;
    assert.equal(typeof w.json().active, 'boolean');
    assert.equal((await call('GET', '/maintenance')).json()[0].id, id);
    const badCron = await call('POST', '/maintenance', {
      name: 'x',
      cron: '61 * * * *',
      durationMinutes: '5',
      monitors: 'a',
    });
    assert.deepEqual([badCron.statusCode, badCron.json().field], [400, 'cron']);
    const badRange = await call('POST', '/maintenance', { name: 'x', from: '200', to: '100', monitors: 'a' });
    assert.deepEqual([badRange.statusCode, badRange.json().field], [400, 'to']);
    assert.equal((await call('DELETE', `/maintenance/${id}`)).statusCode, 200);
    assert.equal((await call('DELETE', `/maintenance/${id}`)).statusCode, 404);
    assert.deepEqual((await call('GET', '/maintenance')).json(), []);
  } finally {
    await app.close();
    await alerting.stop();
    await store.close();
    await rx.close();
    tls.agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
});
