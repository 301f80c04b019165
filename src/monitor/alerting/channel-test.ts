/**
 * A channel test through the API: sends a test message with the channel's current settings ('send', default) or runs
 * the channel's connection check ('probe'), bounded by the send timeout; the outcome is returned, never queued.
 */
import type { Alert } from '../../core/notify/channel.js';
import { ChannelError } from '../../core/notify/channel.js';
import { AppError } from '../../core/errors.js';
import { fromProbe, toAlert } from './alert-format.js';
import type { AlertingContext } from './alerting-context.js';
import type { TestResult } from './alerting-types.js';
import { parseList } from './maintenance.js';

export async function testChannel(
  cx: AlertingContext,
  id: string,
  opts: { to?: string; mode?: 'send' | 'probe' } = {},
): Promise<TestResult> {
  const { channels, channelSettings, log } = cx;
  const c = channels.get(id);
  if (!c) throw AppError.notFound(`unknown channel ${id}`);
  const s = channelSettings.current(id) ?? {};
  const need = channelSettings.missing(id, s);
  const where = c.external ? 'smtp' : 'settings';
  if (need) throw AppError.badRequest(`${id}: ${need} is not set`, `${where}.${need}`);
  const ctx = { signal: AbortSignal.timeout(cx.deps.queue?.sendTimeoutMs ?? 15_000), log };
  if (opts.mode === 'probe') {
    const probed = channels.probe(id, s, ctx);
    if (!probed) throw AppError.badRequest(`${id} has no connection check; send a test instead`, 'body.mode');
    return fromProbe(await probed);
  }
  const to = parseList(opts.to);
  if (c.endpoint.kind === 'smtp' && to.length === 0)
    throw AppError.badRequest('give `to` (comma-separated recipients) for an email test', 'body.to');
  const alert: Alert = {
    ...toAlert({ name: 'test-notification', type: 'test' }, 'test', 'OK', undefined, cx.now()),
    message: 'This is a test notification: the channel works.',
    ...(to.length ? { recipients: to } : {}),
  };
  const started = performance.now();
  try {
    await channels.send(id, alert, s, ctx);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    const error = err instanceof ChannelError ? err.message : 'internal error';
    if (!(err instanceof ChannelError)) log.error({ err, channel: id }, 'alerting: channel test bug');
    return { ok: false, latencyMs: Math.round(performance.now() - started), error };
  }
}
