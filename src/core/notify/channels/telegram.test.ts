import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { type Alert, ChannelError } from '../channel.js';
import { bindChannel, failure, useReceiver } from '../../../../test/support/webhook-receivers.fixture.js';
import { TELEGRAM_API_URL, buildTelegramMessage, telegramChannel } from './telegram.js';

const TOKEN = '123456789:AAExampleExampleExampleExample1234';
const alert: Alert = {
  kind: 'problem',
  monitor: { name: 'db<1>', type: 'db' },
  status: 'CRITICAL',
  message: 'query took 9 s & more',
  timestampMs: 1_700_000_000_000,
};
const okBody = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true,"result":{}}' };

describe('telegram channel', () => {
  const env = useReceiver(okBody);
  const settings = (over: Record<string, string> = {}) => ({
    botToken: TOKEN,
    chatId: '-1001234567890',
    apiUrl: env.rx.url,
    ...over,
  });

  it('builds sendMessage with chat_id, HTML-escaped text, severity emoji and the forum thread', () => {
    const m = buildTelegramMessage(alert, '-100', '42') as any;
    assert.equal(m.chat_id, '-100');
    assert.equal(m.message_thread_id, 42);
    assert.equal(m.parse_mode, 'HTML');
    assert.ok(m.text.startsWith('🔴 <b>[CRITICAL] db&lt;1&gt; is CRITICAL</b>'));
    assert.match(m.text, /<pre>query took 9 s &amp; more<\/pre>/);
    assert.ok(m.text.length <= 4096);
    assert.equal('message_thread_id' in (buildTelegramMessage(alert, '@ops') as any), false);
    assert.equal(telegramChannel.defaults.apiUrl, TELEGRAM_API_URL);
  });

  it('POSTs to <apiUrl>/bot<token>/sendMessage; the token never appears in an error', async () => {
    const ch = bindChannel(telegramChannel, env.tls);
    await ch.send(alert, settings({ threadId: '7' }));
    const r = env.rx.requests.at(-1)!;
    assert.equal(r.method, 'POST');
    assert.equal(r.path, `/bot${TOKEN}/sendMessage`);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.body.chat_id, '-1001234567890');
    assert.equal(r.body.message_thread_id, 7);
    assert.equal(r.body.parse_mode, 'HTML');
    env.rx.plan(
      {
        status: 429,
        body: '{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 5","parameters":{"retry_after":5}}',
      },
      { status: 400, body: '{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}' },
      { status: 401, body: '{"ok":false,"error_code":401,"description":"Unauthorized"}' },
    );
    const errs: ChannelError[] = [];
    for (let i = 0; i < 3; i++) errs.push(await failure(ch.send(alert, settings())));
    assert.deepEqual(
      errs.map((e) => [e instanceof ChannelError, e.retryable, e.retryAfterMs]),
      [
        [true, true, 5000],
        [true, false, undefined],
        [true, false, undefined],
      ],
    );
    assert.match(errs[1]!.message, /chat not found/);
    assert.ok(errs.every((e) => !e.message.includes(TOKEN) && !e.message.includes('AAExample')));
  });

  it('probe: getMe and getChat, nothing sent', async () => {
    const ch = bindChannel(telegramChannel, env.tls);
    env.rx.plan(
      { status: 200, body: '{"ok":true,"result":{"id":1,"is_bot":true,"username":"sentinel_bot"}}' },
      { status: 200, body: '{"ok":true,"result":{"id":-100,"type":"supergroup","title":"Ops"}}' },
    );
    const n = env.rx.requests.length;
    const p = await ch.probe(settings());
    assert.equal(p.ok, true, p.message);
    assert.match(p.message ?? '', /@sentinel_bot sees supergroup Ops/);
    assert.deepEqual(
      env.rx.requests.slice(n).map((r) => [r.method, r.path]),
      [
        ['GET', `/bot${TOKEN}/getMe`],
        ['POST', `/bot${TOKEN}/getChat`],
      ],
    );
  });

  it('validates the token, chat id, thread id and API URL', () => {
    const check = (s: Record<string, string>) => telegramChannel.validate?.(s);
    assert.equal(check({ apiUrl: 'http://api.telegram.org' })?.field, 'apiUrl');
    assert.equal(check({ apiUrl: 'https://tg.local' }), undefined);
    assert.equal(Value.Check(telegramChannel.settings, { chatId: 'ops' }), false);
    assert.equal(Value.Check(telegramChannel.settings, { chatId: '@ops_channel', threadId: '5' }), true);
    assert.equal(Value.Check(telegramChannel.settings, { botToken: 'nope' }), false);
  });
});
