import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import {
  type TestTls,
  type WebhookReceiver,
  bindChannel,
  makeTestTls,
  startWebhookReceiver,
} from '../../../../test/support/webhook-receivers.fixture.js';
import { PAGERDUTY_EVENTS_URL, buildPagerDutyEvent, pagerdutyChannel } from './pagerduty.js';

const KEY = 'R0123456789abcdef0123456789ABCDE';
const problem: Alert = {
  kind: 'problem',
  monitor: { name: 'edge', type: 'ping', probe: 'probe-a', tags: ['net', 'prod'] },
  status: 'CRITICAL',
  previousStatus: 'MINOR',
  message: 'loss 80%',
  timestampMs: 1_700_000_000_000,
};
const accepted = {
  status: 202,
  headers: { 'content-type': 'application/json' },
  body: '{"status":"success","message":"Event processed"}',
};

describe('pagerduty channel', () => {
  let tls: TestTls;
  let rx: WebhookReceiver;
  before(async () => {
    tls = makeTestTls();
    rx = await startWebhookReceiver(tls, accepted);
  });
  after(async () => {
    await rx.close();
    tls.agent.destroy();
  });

  it('maps statuses to the four Events API severities (triggers carry them; a test is info)', () => {
    const sev = (status: string) => (buildPagerDutyEvent({ ...problem, status }, KEY) as any).payload.severity;
    assert.deepEqual(['CRITICAL', 'DOWN', 'MAJOR', 'ERROR', 'EXCEPTION', 'MINOR'].map(sev), [
      'critical',
      'critical',
      'error',
      'error',
      'error',
      'warning',
    ]);
    assert.equal((buildPagerDutyEvent({ ...problem, kind: 'test' }, KEY) as any).payload.severity, 'info');
  });

  it('an acknowledgement in Sentinel is an acknowledge event of the same dedup_key', async () => {
    const ack: Alert = { ...problem, kind: 'acknowledge', acknowledgement: { by: 'alice', atMs: 1, note: 'on it' } };
    assert.deepEqual(buildPagerDutyEvent(ack, KEY), {
      routing_key: KEY,
      event_action: 'acknowledge',
      dedup_key: 'sentinel/ping/edge',
    });
    assert.ok(pagerdutyChannel.kinds.includes('acknowledge'));
    const ch = bindChannel(pagerdutyChannel, tls);
    await ch.send(ack, { routingKey: KEY, eventsUrl: `${rx.url}/v2/enqueue` });
    assert.equal(rx.requests.at(-1)!.body.event_action, 'acknowledge');
  });

  it('builds a trigger with the documented fields, and a resolve with the same dedup_key', () => {
    const t = buildPagerDutyEvent(problem, KEY) as any;
    assert.deepEqual(Object.keys(t).sort(), ['dedup_key', 'event_action', 'payload', 'routing_key']);
    assert.equal(t.routing_key, KEY);
    assert.equal(t.event_action, 'trigger');
    assert.equal(t.dedup_key, 'sentinel/ping/edge');
    assert.deepEqual(Object.keys(t.payload).sort(), [
      'class',
      'component',
      'custom_details',
      'group',
      'severity',
      'source',
      'summary',
      'timestamp',
    ]);
    assert.equal(t.payload.severity, 'critical');
    assert.equal(t.payload.source, 'probe-a');
    assert.equal(t.payload.timestamp, '2023-11-14T22:13:20.000Z');
    assert.equal(t.payload.component, 'edge');
    assert.equal(t.payload.group, 'net');
    assert.equal(t.payload.class, 'ping');
    assert.ok(t.payload.summary.length <= 1024);
    assert.equal(t.payload.custom_details.message, 'loss 80%');
    const r = buildPagerDutyEvent({ ...problem, kind: 'recovery', status: 'OK' }, KEY);
    assert.deepEqual(r, { routing_key: KEY, event_action: 'resolve', dedup_key: 'sentinel/ping/edge' });
  });

  it('sends to the overridable eventsUrl; a test triggers then resolves an info event', async () => {
    const ch = bindChannel(pagerdutyChannel, tls);
    const s = { enabled: 'true', routingKey: KEY, eventsUrl: `${rx.url}/v2/enqueue` };
    await ch.send(problem, s);
    assert.equal(rx.requests.at(-1)!.path, '/v2/enqueue');
    assert.deepEqual(rx.requests.at(-1)!.body, buildPagerDutyEvent(problem, KEY));
    const before = rx.requests.length;
    await ch.send({ kind: 'test', monitor: { name: 'test', type: 'test' }, status: 'OK', timestampMs: 5 }, s);
    const [trig, res] = rx.requests.slice(before).map((r) => r.body);
    assert.equal(trig.event_action, 'trigger');
    assert.equal(trig.payload.severity, 'info');
    assert.deepEqual(res, { routing_key: KEY, event_action: 'resolve', dedup_key: trig.dedup_key });
  });

  it('429 is retryable with Retry-After; 400 invalid event is not; key never in messages', async () => {
    const ch = bindChannel(pagerdutyChannel, tls);
    const s = { routingKey: KEY, eventsUrl: `${rx.url}/v2/enqueue` };
    rx.plan(
      { status: 429, headers: { 'retry-after': '3' } },
      { status: 400, body: '{"status":"invalid event","message":"Event object is invalid"}' },
    );
    const e1 = await ch.send(problem, s).catch((e) => e);
    const e2 = await ch.send(problem, s).catch((e) => e);
    assert.ok(e1 instanceof ChannelError && e1.retryable && e1.retryAfterMs === 3000);
    assert.ok(e2 instanceof ChannelError && !e2.retryable);
    assert.ok(![e1.message, e2.message].some((m) => m.includes(KEY)));
  });

  it('validates the routing key and the events URL, defaulting to the real endpoint', () => {
    const ch = pagerdutyChannel;
    assert.equal(ch.defaults?.eventsUrl, PAGERDUTY_EVENTS_URL);
    assert.equal(ch.validate?.({ routingKey: 'short' })?.field, 'routingKey');
    assert.equal(ch.validate?.({ routingKey: KEY, eventsUrl: 'ftp://x' })?.field, 'eventsUrl');
    assert.equal(ch.validate?.({ routingKey: KEY }), undefined);
  });
});
