import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { installErrorHandling } from '../../core/http/error-handler.js';
import { CHANNELS, createChannelRegistry } from '../../core/notify/registry.js';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { openLmdbStore } from '../../core/storage/lmdb-store.js';
import { makeTestTls, startWebhookReceiver } from '../../../test/support/webhook-receivers.fixture.js';
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
    getMonitor: (name) => (name === 'web' ? { name: 'web', type: 'url', notifyStatus: 'on' } : undefined),
  });
  await alerting.start();
  const app = Fastify();
  installErrorHandling(app);
  // Stands in for the auth guard (tested in test/foundation): the caller is "alice".
  app.decorateRequest('user', undefined);
  app.addHook('onRequest', async (req) => {
    req.user = { username: 'alice', group: 'user', tokenId: 't', tokenKind: 'login' };
  });
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
    assert.deepEqual(Object.keys(all.json()).sort(), CHANNELS.map((c) => c.id).sort());
    assert.equal(all.json().webhook.hmacSecret, 'unset', 'secrets of every channel read set/unset');
    assert.equal(all.json().email.configuredVia, 'POST /setsmtpvault');
    const bad = await call('POST', '/alerting/channels/teams', { webhookUrl: 'http://insecure' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().field, 'body.webhookUrl');
    assert.equal((await call('POST', '/alerting/channels/fax', { enabled: 'true' })).statusCode, 404);
    const notString = await call('POST', '/alerting/channels/slack', { enabled: 1 });
    assert.deepEqual([notString.statusCode, notString.json().field], [400, 'body.enabled']);
    const foreign = await call('POST', '/alerting/channels/slack', { botToken: 'x' });
    assert.deepEqual([foreign.statusCode, foreign.json().field], [400, 'body.botToken']);
    const email = await call('POST', '/alerting/channels/email', { smtpHost: 'x' });
    assert.deepEqual([email.statusCode, email.json().field], [400, 'params.channel']);

    const catalog = await call('GET', '/alerting/catalog');
    assert.equal(catalog.statusCode, 200);
    const entries = catalog.json<Array<Record<string, any>>>();
    assert.deepEqual(
      entries.map((e) => e.id),
      CHANNELS.map((c) => c.id),
    );
    const tg = entries.find((e) => e.id === 'telegram')!;
    assert.deepEqual(tg.secretFields, ['botToken']);
    assert.equal(tg.settings.properties.botToken['x-secret'], true);
    assert.equal(tg.example.botToken, undefined, 'no secret in the catalog, even an example');
    assert.ok('notifyTelegram' in tg.monitorFields);
    assert.equal(tg.probe, true);
    assert.equal(entries.find((e) => e.id === 'slack')!.probe, false);

    const noProbe = await call('POST', '/alerting/channels/slack/test', { mode: 'probe' });
    assert.deepEqual([noProbe.statusCode, noProbe.json().field], [400, 'body.mode']);
    const badMode = await call('POST', '/alerting/channels/slack/test', { mode: 'loud' });
    assert.deepEqual([badMode.statusCode, badMode.json().field], [400, 'body.mode']);

    const t = await call('POST', '/alerting/channels/slack/test');
    assert.equal(t.statusCode, 200, t.body);
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

    const problems = await call('GET', '/alerting/problems');
    assert.deepEqual(
      problems.json().map((p: any) => [p.monitor, p.status, p.acknowledged]),
      [['web', 'DOWN', undefined]],
    );
    const ack = await call('POST', '/alerting/ack/web', { note: 'on it' });
    assert.equal(ack.statusCode, 200, ack.body);
    assert.deepEqual(
      [ack.json().acknowledged.by, ack.json().acknowledged.note, ack.json().acknowledged.status],
      ['alice', 'on it', 'DOWN'],
    );
    assert.equal((await call('GET', '/alerting/problems?monitor=web')).json()[0].acknowledged.by, 'alice');
    assert.equal((await call('POST', '/alerting/ack/nope')).statusCode, 404);
    const longNote = await call('POST', '/alerting/ack/web', { note: 'x'.repeat(1001) });
    assert.deepEqual([longNote.statusCode, longNote.json().field], [400, 'body.note']);
    assert.equal((await call('DELETE', '/alerting/ack/web')).json().acknowledged, undefined);
    assert.equal((await call('DELETE', '/alerting/ack/web')).statusCode, 409);
    alerting.onResult({ name: 'web', type: 'url', notifyStatus: 'on' }, 'OK');
    await alerting.idle();
    assert.deepEqual((await call('GET', '/alerting/problems')).json(), []);
    const noProblem = await call('POST', '/alerting/ack/web');
    assert.equal(noProblem.statusCode, 409);

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
