import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { createChannelRegistry } from '../../core/notify/registry.js';
import { createSecretBox } from '../../core/secrets/secret-box.js';
import { type LmdbStore, openLmdbStore } from '../../core/storage/lmdb-store.js';
import { isAppError } from '../../core/errors.js';
import {
  type TestTls,
  type WebhookReceiver,
  makeTestTls,
  startWebhookReceiver,
} from '../../../test/support/webhook-receivers.fixture.js';
import { type AlertMonitor, type AlertingServiceDeps, createAlertingService } from './alerting.service.js';
import { CHANNEL_BUCKET } from './channel-settings.js';

const log = pino({ level: 'silent' });
const KEY = 'R0123456789abcdef0123456789ABCDE';

describe('alerting service', () => {
  let tls: TestTls;
  let slack: WebhookReceiver;
  let teams: WebhookReceiver;
  let pd: WebhookReceiver;
  let smtp: SMTPServer;
  let smtpPort = 0;
  const mails: Array<{ to: string[]; raw: string }> = [];
  const dirs: string[] = [];
  const secrets = createSecretBox(randomBytes(32));

  before(async () => {
    tls = makeTestTls();
    [slack, teams, pd] = await Promise.all([
      startWebhookReceiver(tls),
      startWebhookReceiver(tls, { status: 202 }),
      startWebhookReceiver(tls, { status: 202, body: '{"status":"success"}' }),
    ]);
    smtp = new SMTPServer({
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    smtpPort = (smtp.server.address() as AddressInfo).port;
  });
  after(async () => {
    await Promise.all([slack.close(), teams.close(), pd.close(), new Promise<void>((r) => smtp.close(() => r()))]);
    tls.agent.destroy();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const openStore = async (dir?: string): Promise<{ store: LmdbStore; dir: string }> => {
    const d = dir ?? mkdtempSync(join(tmpdir(), 'alerting-'));
    if (!dir) dirs.push(d);
    return { store: await openLmdbStore({ path: d, noSync: true }), dir: d };
  };
  const smtpSettings = () => ({
    smtpHost: '127.0.0.1',
    smtpPort: String(smtpPort),
    smtpFrom: 'Sentinel <s@example.com>',
    smtpEnabled: 'true',
    smtpSecure: 'none',
  });
  const make = (store: LmdbStore, extra: Partial<AlertingServiceDeps> = {}) =>
    createAlertingService({
      store,
      log,
      secrets,
      external: { email: smtpSettings },
      channels: createChannelRegistry({ agent: tls.agent, timeoutMs: 5000 }),
      queue: { baseBackoffMs: 50, maxBackoffMs: 200, maxAttempts: 4 },
      ...extra,
    });
  const monitor = (over: Record<string, string> = {}): AlertMonitor => ({
    name: 'shop',
    type: 'url',
    display_name: 'Shop',
    notifyStatus: 'on',
    notifyAfter: '2',
    emailOnF: 'true',
    emailR: 'ops@example.com,dev@example.com',
    tags: '[prod,web]',
    ...over,
  });

  it('flapping OK/DOWN against notifyAfter 2 gives exact alerts on every channel', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/hook/secret1` });
    await svc.channelSettings.set('teams', { enabled: 'true', webhookUrl: `${teams.url}/wf` });
    await svc.channelSettings.set('pagerduty', { enabled: 'true', routingKey: KEY, eventsUrl: `${pd.url}/v2/enqueue` });
    const [s0, t0, p0, m0] = [slack.requests.length, teams.requests.length, pd.requests.length, mails.length];
    const seq = ['OK', 'DOWN', 'OK', 'DOWN', 'DOWN', 'DOWN', 'CRITICAL', 'OK', 'DOWN', 'OK'];
    // problems at index 4 (DOWN after 2), 6 (CRITICAL: change); recovery at 7 → 3 alerts per channel.
    for (const st of seq) svc.onResult(monitor(), st, { message: `status ${st}`, responseTimeMs: 10 });
    await svc.idle();
    assert.equal(slack.requests.length - s0, 3);
    assert.equal(teams.requests.length - t0, 3);
    assert.equal(pd.requests.length - p0, 3);
    assert.equal(mails.length - m0, 3);
    const ev = pd.requests.slice(p0).map((r) => [r.body.event_action, r.body.payload?.severity, r.body.dedup_key]);
    assert.deepEqual(ev, [
      ['trigger', 'critical', 'sentinel/url/shop'],
      ['trigger', 'critical', 'sentinel/url/shop'],
      ['resolve', undefined, 'sentinel/url/shop'],
    ]);
    assert.deepEqual(mails[m0]!.to, ['ops@example.com', 'dev@example.com']);
    assert.match(mails[m0]!.raw, /Subject: \[DOWN\] Shop \(shop\) is DOWN/);
    assert.match(mails.at(-1)!.raw, /Subject: \[RECOVERED\] Shop \(shop\) is OK/);
    assert.match(JSON.stringify(slack.requests[s0]!.body), /status DOWN/);
    const log = await svc.deliveries(50);
    assert.equal(log.filter((d) => d.outcome === 'delivered').length, 12);
    await svc.stop();
    await store.close();
  });

  it('opt-outs and emailOnF select the channels', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/hook` });
    await svc.channelSettings.set('teams', { enabled: 'true', webhookUrl: `${teams.url}/wf` });
    const [s0, t0, m0] = [slack.requests.length, teams.requests.length, mails.length];
    svc.onResult(monitor({ notifyAfter: '1', notifySlack: 'false', emailOnF: 'false' }), 'DOWN');
    await svc.idle();
    assert.deepEqual([slack.requests.length - s0, teams.requests.length - t0, mails.length - m0], [0, 1, 0]);
    await svc.stop();
    await store.close();
  });

  it('a channel answering 500 then 200 is retried and delivered once; maxAttempts then failed', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/retry` });
    const s0 = slack.requests.length;
    slack.plan({ status: 500, body: 'oops' });
    svc.onResult(monitor({ notifyAfter: '1', emailOnF: 'false' }), 'DOWN');
    await svc.idle();
    assert.equal(slack.requests.length - s0, 2);
    const [rec] = await svc.deliveries(1);
    assert.equal(rec!.outcome, 'delivered');
    assert.equal(rec!.attempts, 2);
    // maxAttempts (4 here) retryable failures → recorded as failed with the last error.
    slack.plan({ status: 503 }, { status: 503 }, { status: 503 }, { status: 503 });
    svc.onResult(monitor({ notifyAfter: '1', emailOnF: 'false' }), 'OK');
    await svc.idle();
    const [last] = await svc.deliveries(1);
    assert.deepEqual([last!.outcome, last!.attempts, last!.error], ['failed', 4, 'slack: HTTP 503']);
    await svc.stop();
    await store.close();
  });

  it("one monitor's alerts reach a channel in order: its recovery waits for its problem's retry", async () => {
    // Old code: the recovery went out while the problem waited for its retry (lane concurrency 16), so a receiver
    // such as PagerDuty got resolve before trigger and kept the incident open.
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/order` });
    const s0 = slack.requests.length;
    slack.plan({ status: 503, delayMs: 3000 });
    const m = monitor({ notifyAfter: '1', emailOnF: 'false' });
    svc.onResult(m, 'DOWN', { message: 'status DOWN' });
    svc.onResult(m, 'OK', { message: 'status OK' });
    // Another monitor's alert is not held back by the first one's slow failure and retry.
    await slack.waitFor(s0 + 1);
    svc.onResult(monitor({ name: 'other', notifyAfter: '1', emailOnF: 'false' }), 'DOWN', { message: 'other DOWN' });
    await svc.idle();
    const seen = slack.requests.slice(s0).map((r) => /status (DOWN|OK)|other DOWN/.exec(JSON.stringify(r.body))?.[0]);
    assert.deepEqual(
      seen.filter((x) => x !== 'other DOWN'),
      ['status DOWN', 'status DOWN', 'status OK'],
    );
    assert.equal(seen.indexOf('other DOWN'), 1, `other went out while the first was held: ${seen.join(', ')}`);
    await svc.stop();
    await store.close();
  });

  it('429 Retry-After is honoured instead of the backoff; a 4xx fails at once', async () => {
    const { store } = await openStore();
    const svc = make(store, { queue: { baseBackoffMs: 60_000, maxAttempts: 2 } });
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/ra` });
    const s0 = slack.requests.length;
    slack.plan({ status: 429, headers: { 'retry-after': '1' } });
    svc.onResult(monitor({ notifyAfter: '1', emailOnF: 'false' }), 'DOWN');
    await svc.idle();
    const [a, b] = slack.requests.slice(s0);
    assert.ok(b, 'retried');
    assert.ok(b.atMs - a!.atMs >= 950, `waited ${b.atMs - a!.atMs} ms for Retry-After: 1`);
    slack.plan({ status: 404, body: 'no_service' });
    svc.onResult(monitor({ notifyAfter: '1', emailOnF: 'false' }), 'OK');
    await svc.idle();
    const [rec] = await svc.deliveries(1);
    assert.deepEqual([rec!.outcome, rec!.attempts, rec!.kind], ['failed', 1, 'recovery']);
    assert.match(rec!.error!, /HTTP 404 no_service/);
    await svc.stop();
    await store.close();
  });

  /**
   * A first service queues one alert (monitor `over`) on `channel`, whose first send the receiver answers 503 (the
   * retry a minute away), and stops; a second service on the same store starts and delivers it.
   */
  const restartWithQueued = async (channel: string, settings: Record<string, string>, over: Record<string, string>) => {
    const { store, dir } = await openStore();
    const first = make(store, { queue: { baseBackoffMs: 60_000, maxAttempts: 5 } });
    await first.start();
    await first.channelSettings.set(channel, settings);
    const s0 = slack.requests.length;
    slack.plan({ status: 503 });
    first.onResult(monitor({ notifyAfter: '1', emailOnF: 'false', ...over }), 'DOWN');
    await slack.waitFor(s0 + 1);
    await new Promise((r) => setTimeout(r, 50));
    const pendingAtStop = first.pending();
    await first.stop();
    await store.close();
    const reopened = await openStore(dir);
    const second = make(reopened.store);
    await second.start();
    await second.idle();
    const close = async () => {
      await second.stop();
      await reopened.store.close();
    };
    return { s0, pendingAtStop, second, close };
  };

  it('a restart delivers a queued alert and does not re-alert', async () => {
    const r = await restartWithQueued('slack', { enabled: 'true', webhookUrl: `${slack.url}/restart` }, {});
    assert.deepEqual(r.pendingAtStop, { slack: 0 });
    assert.equal(slack.requests.length - r.s0, 2, 'the queued alert was sent after the restart');
    assert.equal(slack.requests.at(-1)!.body.text, slack.requests[r.s0]!.body.text);
    r.second.onResult(monitor({ notifyAfter: '1', emailOnF: 'false' }), 'DOWN');
    await r.second.idle();
    assert.equal(slack.requests.length - r.s0, 2, 'the persisted state prevents a repeat');
    await r.close();
  });

  it('a webhook resend after a restart carries the same Idempotency-Key (the delivery id)', async () => {
    const settings = { enabled: 'true', url: `${slack.url}/idem` };
    const r = await restartWithQueued('webhook', settings, { notifyChannels: 'webhook' });
    const [a, b] = slack.requests.slice(r.s0).map((x) => x.headers['idempotency-key']);
    const [rec] = await r.second.deliveries(1);
    assert.equal(typeof a, 'string');
    assert.equal(b, a, "the resend carries the first attempt's key");
    assert.equal(a, rec!.id, 'the key is the delivery id');
    await r.close();
  });

  it('a slow channel does not hold back another channel', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/slow` });
    await svc.channelSettings.set('teams', { enabled: 'true', webhookUrl: `${teams.url}/fast` });
    const t0 = teams.requests.length;
    slack.plan({ status: 200, delayMs: 1500 });
    svc.onResult(monitor({ notifyAfter: '1', emailOnF: 'false' }), 'DOWN');
    await teams.waitFor(t0 + 1);
    assert.equal(svc.pending().slack, 1, 'slack still in flight while teams is done');
    await svc.idle();
    await svc.stop();
    await store.close();
  });

  it('a maintenance window yields DOWNTIME and suppresses alerts', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/mw` });
    const t = Date.now();
    await svc.maintenance.create({ name: 'deploy', from: String(t - 60_000), to: String(t + 60_000), tags: 'web' });
    const m = monitor({ notifyAfter: '1', emailOnF: 'false' });
    const s0 = slack.requests.length;
    const status = svc.statusFor(m, 'DOWN', t);
    assert.equal(status, 'DOWNTIME');
    assert.equal(svc.statusFor(monitor({ tags: '[db]' }), 'DOWN', t), 'DOWN', 'out of scope');
    svc.onResult(m, status);
    svc.onResult(m, svc.statusFor(m, 'DOWN', t + 1000));
    await svc.idle();
    assert.equal(slack.requests.length - s0, 0);
    assert.equal(svc.statusFor(m, 'DOWN', t + 120_000), 'DOWN', 'after the window');
    svc.onResult(m, 'DOWN');
    await svc.idle();
    assert.equal(slack.requests.length - s0, 1);
    await svc.stop();
    await store.close();
  });

  it('channel settings: 404 unknown, 400 naming the field, secrets sealed at rest and masked', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    const err = async (p: Promise<unknown>) =>
      p.then(
        () => assert.fail('expected an error'),
        (e) => e,
      );
    const e404 = await err(svc.channelSettings.set('fax', {}));
    assert.ok(isAppError(e404) && e404.status === 404);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['slack', { webhookUrl: 'http://x' }, 'body.webhookUrl'],
      ['slack', { enabled: 'yes' }, 'body.enabled'],
      ['slack', { colour: 'red' }, 'body.colour'],
      ['teams', { enabled: 'true' }, 'body.webhookUrl'],
      ['pagerduty', { routingKey: 'abc' }, 'body.routingKey'],
      ['email', { smtpHost: 'x' }, 'params.channel'],
    ];
    for (const [id, body, field] of cases) {
      const e = await err(svc.channelSettings.set(id, body));
      assert.ok(isAppError(e) && e.status === 400, `${id} ${JSON.stringify(body)}: ${e}`);
      assert.equal(e.field, field);
    }
    const view = await svc.channelSettings.set('pagerduty', { enabled: 'true', routingKey: KEY });
    assert.deepEqual(view, {
      enabled: 'true',
      eventsUrl: 'https://events.pagerduty.com/v2/enqueue',
      routingKey: 'set',
    });
    assert.equal(
      (await svc.channelSettings.set('pagerduty', { routingKey: 'set', enabled: 'false' })).routingKey,
      'set',
    );
    const raw = JSON.stringify(await store.bucket(CHANNEL_BUCKET).get('pagerduty'));
    assert.ok(!raw.includes(KEY), 'sealed at rest');
    const all = svc.channelSettings.view();
    assert.equal(all.slack!.webhookUrl, 'unset');
    assert.equal(all.email!.smtpHost, '127.0.0.1');
    assert.ok(!JSON.stringify(all).includes(KEY));
    await svc.stop();
    await store.close();
  });

  it('testChannel reports ok with latency, or the error', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('teams', { webhookUrl: `${teams.url}/t` });
    const ok = await svc.testChannel('teams');
    assert.equal(ok.ok, true);
    assert.ok(ok.latencyMs >= 0);
    teams.plan({ status: 400, body: 'bad card' });
    assert.deepEqual(await svc.testChannel('teams').then((r) => [r.ok, r.error]), [false, 'teams: HTTP 400 bad card']);
    const m0 = mails.length;
    assert.equal((await svc.testChannel('email', { to: 'qa@example.com' })).ok, true);
    assert.deepEqual(mails[m0]!.to, ['qa@example.com']);
    const e = await svc.testChannel('slack').catch((x) => x);
    assert.ok(isAppError(e) && e.status === 400);
    await svc.stop();
    await store.close();
  });

  it('notifyChannels routes a monitor to named channels and tag:<name> groups; opt-outs still apply', async () => {
    const { store } = await openStore();
    const svc = make(store);
    await svc.start();
    await svc.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/r`, tags: 'chat, day' });
    await svc.channelSettings.set('teams', { enabled: 'true', webhookUrl: `${teams.url}/r`, tags: 'chat' });
    await svc.channelSettings.set('pagerduty', {
      enabled: 'true',
      routingKey: KEY,
      eventsUrl: `${pd.url}/v2/enqueue`,
      tags: 'pager',
    });
    const sent = async (fields: Record<string, string>): Promise<string[]> => {
      const before = [slack.requests.length, teams.requests.length, pd.requests.length, mails.length];
      svc.onResult(monitor({ notifyAfter: '1', ...fields }), 'DOWN');
      svc.onResult(monitor({ notifyAfter: '1', ...fields }), 'OK');
      await svc.idle();
      const after = [slack.requests.length, teams.requests.length, pd.requests.length, mails.length];
      return ['slack', 'teams', 'pagerduty', 'email'].filter((_, i) => after[i]! > before[i]!);
    };
    assert.deepEqual(await sent({}), ['slack', 'teams', 'pagerduty', 'email'], 'unset: every enabled channel');
    assert.deepEqual(await sent({ notifyChannels: 'pagerduty' }), ['pagerduty']);
    assert.deepEqual(await sent({ notifyChannels: 'tag:chat' }), ['slack', 'teams']);
    assert.deepEqual(await sent({ notifyChannels: 'email, tag:day' }), ['slack', 'email']);
    assert.deepEqual(await sent({ notifyChannels: 'tag:chat', notifyTeams: 'false' }), ['slack'], 'opt-out wins');
    assert.deepEqual(await sent({ notifyChannels: 'email', emailOnF: 'false' }), [], 'email still needs emailOnF');
    await svc.stop();
    await store.close();
  });

  it('an acknowledgement is persisted (survives a restart), told to PagerDuty, and stops re-notifying', async () => {
    const { store, dir } = await openStore();
    const m = monitor({ notifyAfter: '1', renotifyMinutes: '1', emailOnF: 'false' });
    let t = 1_700_000_000_000;
    const first = make(store, { now: () => t, getMonitor: (n) => (n === m.name ? m : undefined) });
    await first.start();
    await first.channelSettings.set('slack', { enabled: 'true', webhookUrl: `${slack.url}/ack` });
    await first.channelSettings.set('pagerduty', {
      enabled: 'true',
      routingKey: KEY,
      eventsUrl: `${pd.url}/v2/enqueue`,
    });
    first.onResult(m, 'DOWN');
    await first.idle();
    const [s0, p0] = [slack.requests.length, pd.requests.length];
    const v = await first.acknowledge(m.name, { by: 'alice', note: 'rebooting' });
    assert.deepEqual(v.acknowledged, { by: 'alice', atMs: t, note: 'rebooting', status: 'DOWN' });
    await first.idle();
    assert.equal(slack.requests.length, s0, 'chat channels are not told');
    assert.deepEqual(
      pd.requests.slice(p0).map((r) => [r.body.event_action, r.body.dedup_key]),
      [['acknowledge', 'sentinel/url/shop']],
    );
    await first.stop();
    await store.close();

    const reopened = await openStore(dir);
    const second = make(reopened.store, { now: () => t, getMonitor: (n) => (n === m.name ? m : undefined) });
    await second.start();
    assert.equal((await second.problems())[0]!.acknowledged?.by, 'alice', 'the acknowledgement survived the restart');
    t += 5 * 60_000;
    second.onResult(m, 'DOWN');
    await second.idle();
    assert.equal(slack.requests.length, s0, 'no re-notify while acknowledged');
    await second.unacknowledge(m.name);
    t += 60_000;
    second.onResult(m, 'DOWN');
    await second.idle();
    assert.equal(slack.requests.length, s0 + 1, 're-notify resumes');
    await assert.rejects(second.acknowledge('ghost', { by: 'a' }), (e) => isAppError(e) && e.status === 404);
    second.onResult(m, 'OK');
    await second.idle();
    await assert.rejects(second.acknowledge(m.name, { by: 'a' }), (e) => isAppError(e) && e.status === 409);
    await second.stop();
    await reopened.store.close();
  });
});
