/**
 * The channel registry matches the folder and every channel really delivers: each file in src/core/notify/channels/
 * (kebab-less id) exports `<id>Channel`, is registered under its id and has a test beside it; each declaration is
 * complete (example settings valid, monitor fields accept strings, severity map whole); and, end to end through the
 * alerting service with each channel configured from its own example (endpoint pointed at a local receiver), one DOWN
 * result reaches every channel, an acknowledgement reaches the channels that take one, the recovery reaches every
 * channel, and the test send and probe work. A channel added as docs/extending.md says is covered with no edit here.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import type { ChannelDefinition } from '../../src/core/notify/channel.js';
import { SEVERITY_KEYS } from '../../src/core/notify/channel.js';
import { channelMonitorFields } from '../../src/core/notify/monitor-fields.js';
import { CHANNELS, createChannelRegistry } from '../../src/core/notify/registry.js';
import { createSecretBox } from '../../src/core/secrets/secret-box.js';
import { openLmdbStore, type LmdbStore } from '../../src/core/storage/lmdb-store.js';
import { type AlertingService, createAlertingService } from '../../src/monitor/alerting/alerting.service.js';
import {
  type TestTls,
  type WebhookReceiver,
  makeTestTls,
  startWebhookReceiver,
} from '../support/webhook-receivers.fixture.js';

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/core/notify/channels');
const files = fs.readdirSync(DIR).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

/** The example settings with the endpoint moved to a local receiver (the path of the example URL kept). */
function pointAt(c: ChannelDefinition, base: string, smtpPort: number): Record<string, string> {
  const s: Record<string, string> = { ...c.example, ...(c.external ? {} : { enabled: 'true' }) };
  const ep = c.endpoint;
  if (ep.kind === 'smtp') return { ...s, [ep.host]: '127.0.0.1', [ep.port]: String(smtpPort), smtpSecure: 'none' };
  const example = c.example[ep.setting];
  s[ep.setting] = example ? `${base}${new URL(example).pathname}${new URL(example).search}` : base;
  return s;
}

describe('channel registry', () => {
  it('every channel file is registered under its id, exports <id>Channel and has a test beside it', async () => {
    const ids = files.map((f) => f.replace(/\.ts$/, ''));
    assert.deepEqual(CHANNELS.map((c) => c.id).sort(), [...ids].sort());
    for (const id of ids) {
      const mod = (await import(pathToFileURL(path.join(DIR, `${id}.ts`)).href)) as Record<string, unknown>;
      assert.equal(
        mod[`${id}Channel`],
        CHANNELS.find((c) => c.id === id),
        `${id}.ts exports the registered ${id}Channel`,
      );
      assert.ok(fs.existsSync(path.join(DIR, `${id}.test.ts`)), `${id}.test.ts exists`);
    }
  });

  it('every declaration is complete and its example is valid', () => {
    const monitorFields = Object.keys(channelMonitorFields());
    assert.equal(new Set(monitorFields).size, monitorFields.length);
    for (const c of CHANNELS) {
      for (const k of SEVERITY_KEYS) assert.ok(c.severity[k], `${c.id}: severity ${k}`);
      const example = pointAt(c, 'https://127.0.0.1:1', 25);
      assert.ok(
        Value.Check(c.settings, example),
        `${c.id}: example fits the schema: ${[...Value.Errors(c.settings, example)].map((e) => `${e.path} ${e.message}`).join('; ')}`,
      );
      assert.equal(c.validate?.(example), undefined, `${c.id}: example passes validate()`);
      for (const k of c.requiredWhenEnabled) assert.ok(example[k], `${c.id}: example sets required ${k}`);
      for (const [k, s] of Object.entries(c.monitorFields)) {
        assert.ok(Value.Check(s, 'false') && Value.Check(s, ''), `${c.id}.${k} accepts 'false' and ''`);
        assert.equal(c.route({ [k]: 'false' }), undefined, `${c.id}.${k} = false opts out`);
      }
      assert.ok(c.kinds.includes('problem') && c.kinds.includes('recovery') && c.kinds.includes('test'));
    }
  });
});

describe('every registered channel delivers through the alerting service', () => {
  let tls: TestTls;
  const receivers = new Map<string, WebhookReceiver>();
  const mails: Array<{ to: string[]; raw: string }> = [];
  let smtp: SMTPServer;
  let smtpPort = 0;
  let dir: string;
  let store: LmdbStore;
  let alerting: AlertingService;
  const smtpSettings: Record<string, string> = {};
  const monitor = {
    name: 'meta-shop',
    type: 'url',
    notifyStatus: 'on',
    notifyAfter: '1',
    emailOnF: 'true',
    emailR: 'ops@example.com',
  };

  before(async () => {
    tls = makeTestTls();
    smtp = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      allowInsecureAuth: true,
      onAuth: (_a, _s, cb) => cb(null, { user: 'alerts' }),
      logger: false,
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString() });
          cb();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meta-channels-'));
    store = await openLmdbStore({ path: dir, noSync: true });
    alerting = createAlertingService({
      store,
      log: pino({ level: 'silent' }),
      secrets: createSecretBox(randomBytes(32)),
      channels: createChannelRegistry({ agent: tls.agent, timeoutMs: 5000 }),
      external: { email: () => smtpSettings },
      getMonitor: (name) => (name === monitor.name ? monitor : undefined),
      queue: { baseBackoffMs: 50, maxBackoffMs: 200, maxAttempts: 2 },
    });
    await alerting.start();
    for (const c of CHANNELS) {
      if (c.endpoint.kind === 'smtp') {
        Object.assign(smtpSettings, pointAt(c, '', smtpPort));
        continue;
      }
      const rx = await startWebhookReceiver(tls, { status: 200, body: '{"ok":true,"status":1}' });
      receivers.set(c.id, rx);
      await alerting.channelSettings.set(c.id, pointAt(c, rx.url, smtpPort));
    }
  });
  after(async () => {
    await alerting?.stop();
    await store?.close();
    for (const rx of receivers.values()) await rx.close();
    await new Promise<void>((r) => smtp.close(() => r()));
    tls.agent.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const counts = () =>
    Object.fromEntries(CHANNELS.map((c) => [c.id, receivers.get(c.id)?.requests.length ?? mails.length]));

  it('a problem, an acknowledgement and a recovery reach every channel that takes them', async () => {
    for (const c of CHANNELS) assert.ok(alerting.channelSettings.active(c.id), `${c.id} is active from its example`);
    const c0 = counts();
    alerting.onResult(monitor, 'DOWN', { message: 'connection refused' });
    await alerting.idle();
    const c1 = counts();
    for (const c of CHANNELS) assert.ok(c1[c.id]! > c0[c.id]!, `${c.id} received the problem`);
    const delivered = (await alerting.deliveries(100)).filter((d) => d.kind === 'problem' && d.outcome === 'delivered');
    assert.deepEqual(delivered.map((d) => d.channel).sort(), CHANNELS.map((c) => c.id).sort());

    const ack = await alerting.acknowledge(monitor.name, { by: 'meta', note: 'looking' });
    assert.equal(ack.acknowledged?.by, 'meta');
    await alerting.idle();
    const c2 = counts();
    for (const c of CHANNELS)
      assert.equal(c2[c.id]! > c1[c.id]!, c.kinds.includes('acknowledge'), `${c.id} acknowledgement per its kinds`);

    alerting.onResult(monitor, 'OK');
    await alerting.idle();
    const c3 = counts();
    for (const c of CHANNELS) assert.ok(c3[c.id]! > c2[c.id]!, `${c.id} received the recovery`);
    const failed = (await alerting.deliveries(100)).filter((d) => d.outcome === 'failed');
    assert.deepEqual(failed, []);
  });

  it('the test send works for every channel, and the probe for every channel that has one', async () => {
    for (const c of CHANNELS) {
      const t = await alerting.testChannel(c.id, { to: 'ops@example.com' });
      assert.equal(t.ok, true, `${c.id} test: ${t.error}`);
      if (!c.probe) continue;
      const p = await alerting.testChannel(c.id, { mode: 'probe' });
      assert.equal(p.ok, true, `${c.id} probe: ${p.error}`);
    }
  });
});
