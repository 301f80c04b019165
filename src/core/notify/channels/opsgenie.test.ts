import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { buildOpsgenieAlert, opsgenieAlias, opsgenieChannel } from './opsgenie.js';

const KEY = 'eb243592-faa2-4ba2-a551-1afdf565c889';
const problem: Alert = {
  kind: 'problem',
  monitor: { name: 'checkout', type: 'exec', tags: ['shop'] },
  status: 'MINOR',
  message: 'step 3 slow',
  timestampMs: 1_700_000_000_000,
};
const accepted = { status: 202, body: '{"result":"Request will be processed","took":0.1,"requestId":"r1"}' };

describe('opsgenie channel', () => {
  const env = useReceiver(accepted);
  const s = () => ({ apiKey: KEY, apiUrl: env.rx.url, team: 'ops' });

  it('builds a create-alert body within the documented limits, with one alias per monitor and a priority', () => {
    const b = buildOpsgenieAlert({ ...problem, message: 'x'.repeat(20_000) }, undefined, 'ops') as any;
    assert.equal(b.alias, 'sentinel:exec:checkout');
    assert.ok(b.message.length <= 130);
    assert.ok(b.description.length <= 15_000);
    assert.equal(b.priority, 'P3');
    assert.deepEqual(b.responders, [{ type: 'team', name: 'ops' }]);
    assert.deepEqual(b.tags, ['sentinel', 'MINOR', 'exec', 'shop']);
    assert.equal(b.entity, 'checkout');
    assert.equal(b.details.Status, 'MINOR');
    const p = (status: string) => (buildOpsgenieAlert({ ...problem, status }) as any).priority;
    assert.deepEqual(['CRITICAL', 'DOWN', 'MAJOR', 'ERROR', 'EXCEPTION', 'MINOR'].map(p), [
      'P1',
      'P1',
      'P2',
      'P2',
      'P2',
      'P3',
    ]);
  });

  it('problem → create with GenieKey; worse → create again (same alias) and the new priority; recovery → close', async () => {
    const ch = bindChannel(opsgenieChannel, env.tls);
    const n = env.rx.requests.length;
    await ch.send(problem, s());
    await ch.send({ ...problem, status: 'DOWN', previousStatus: 'MINOR' }, s());
    await ch.send({ ...problem, kind: 'recovery', status: 'OK', previousStatus: 'DOWN' }, s());
    const reqs = env.rx.requests.slice(n);
    const alias = encodeURIComponent(opsgenieAlias(problem));
    assert.deepEqual(
      reqs.map((r) => [r.method, r.path]),
      [
        ['POST', '/v2/alerts'],
        ['POST', '/v2/alerts'],
        ['PUT', `/v2/alerts/${alias}/priority?identifierType=alias`],
        ['POST', `/v2/alerts/${alias}/close?identifierType=alias`],
      ],
    );
    assert.ok(reqs.every((r) => r.headers.authorization === `GenieKey ${KEY}`));
    assert.equal(reqs[0]!.body.alias, 'sentinel:exec:checkout');
    assert.equal(reqs[1]!.body.alias, reqs[0]!.body.alias, 'de-duplicated into the same alert');
    assert.deepEqual(reqs[2]!.body, { priority: 'P1' });
    assert.equal(reqs[3]!.body.source, 'Sentinel');
    assert.match(reqs[3]!.body.note, /Recovered/);
  });

  it('an acknowledgement acknowledges the alert by alias with who and the note', async () => {
    const ch = bindChannel(opsgenieChannel, env.tls);
    await ch.send({ ...problem, kind: 'acknowledge', acknowledgement: { by: 'alice', atMs: 5, note: 'looking' } }, s());
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.path, `/v2/alerts/${encodeURIComponent('sentinel:exec:checkout')}/acknowledge?identifierType=alias`);
    assert.deepEqual(r.body, { user: 'alice', source: 'Sentinel', note: 'looking' });
    assert.ok(opsgenieChannel.kinds.includes('acknowledge'));
  });

  it('a test creates a P5 alert under its own alias and closes it', async () => {
    const ch = bindChannel(opsgenieChannel, env.tls);
    const n = env.rx.requests.length;
    await ch.send(
      { kind: 'test', monitor: { name: 'test-notification', type: 'test' }, status: 'OK', timestampMs: 77 },
      s(),
    );
    const [create, close] = env.rx.requests.slice(n);
    assert.equal(create!.body.priority, 'P5');
    assert.equal(create!.body.alias, 'sentinel:test:77');
    assert.equal(close!.path, `/v2/alerts/${encodeURIComponent('sentinel:test:77')}/close?identifierType=alias`);
  });

  it('422 is not retryable, 429 and 5xx are; the key never appears in errors', async () => {
    const ch = bindChannel(opsgenieChannel, env.tls);
    env.rx.plan(
      { status: 422, body: '{"message":"Request body is not processable"}' },
      { status: 429 },
      { status: 502 },
    );
    const errs: ChannelError[] = [];
    for (let i = 0; i < 3; i++) errs.push(await failure(ch.send(problem, s())));
    assert.deepEqual(
      errs.map((e) => e instanceof ChannelError && e.retryable),
      [false, true, true],
    );
    assert.ok(errs.every((e) => !e.message.includes(KEY)));
  });
});
