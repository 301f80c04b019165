/**
 * One delivery attempt and its outcome. An item is sent only once its queuing is durable (a refused, stale-fence
 * write is given up) and, in a cluster, only under its key's valid claim. A retryable ChannelError is retried with
 * exponential backoff (base · 2^(attempt-1), capped, ±20 % jitter) or after its Retry-After, which also pauses the
 * lane; after `maxAttempts` or a non-retryable error the item has failed. A final outcome removes the item from the
 * queue and appends it to the bounded delivery log, in one write.
 */
import { ChannelError } from '../../core/notify/channel.js';
import { isStaleFence } from '../../core/storage/claims.js';
import { makeReady, release } from './delivery-lanes.js';
import { pruneIfOver } from './delivery-log.js';
import { type Lane, type QueueState, keyOf, later, settle } from './delivery-state.js';
import { DELIVERY_BUCKET, type DeliveryRecord, QUEUE_BUCKET, type QueueItem } from './delivery-types.js';

function backoffMs(s: QueueState, attempts: number): number {
  const raw = Math.min(s.maxBackoffMs, s.baseBackoffMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(raw * (0.8 + Math.random() * 0.4));
}

async function finish(
  s: QueueState,
  item: QueueItem,
  outcome: DeliveryRecord['outcome'],
  error?: string,
): Promise<void> {
  const finishedMs = s.now();
  const rec: DeliveryRecord = {
    id: item.id,
    channel: item.channel,
    kind: item.alert.kind,
    monitor: item.alert.monitor.name,
    status: item.alert.status,
    outcome,
    attempts: item.attempts,
    createdMs: item.createdMs,
    finishedMs,
    ...(error ? { error } : {}),
  };
  s.durable.delete(item.id);
  release(s, item);
  s.counts[outcome]++;
  s.logCount++;
  const removed = s.o.writes.write([
    { type: 'delete', bucket: QUEUE_BUCKET, key: item.id },
    { type: 'put', bucket: DELIVERY_BUCKET, key: [finishedMs, item.id], value: rec },
  ]);
  if (s.keeper) {
    s.admitted.delete(item.id);
    s.keeper.done(keyOf(item), s.gens.get(item), removed);
  }
  try {
    await removed;
    await pruneIfOver(s);
  } catch {
    /* logged by the write buffer */
  }
  const log = outcome === 'delivered' ? s.log.debug.bind(s.log) : s.log.warn.bind(s.log);
  log(
    { channel: item.channel, monitor: rec.monitor, kind: rec.kind, attempts: item.attempts, error },
    `alert ${outcome}`,
  );
  settle(s);
}

/** Not sent here: its queuing was refused (stale fence), or (cluster) its claim lapsed or went to another member. */
export function abandon(s: QueueState, item: QueueItem): void {
  s.durable.delete(item.id);
  release(s, item);
  if (s.keeper && s.admitted.get(item.id) === item) {
    s.admitted.delete(item.id);
    s.keeper.done(keyOf(item), s.gens.get(item), Promise.resolve());
  }
  settle(s);
}

export async function attempt(s: QueueState, lane: Lane, item: QueueItem): Promise<void> {
  const { o, keeper } = s;
  const refused = await s.durable.get(item.id)?.then(
    () => false,
    (err: unknown) => isStaleFence(err),
  );
  if (s.stopping.signal.aborted) return;
  if (refused || (keeper && !keeper.valid(keyOf(item), s.gens.get(item)))) return abandon(s, item);
  const settings = o.getSettings(item.channel);
  if (!o.channels.has(item.channel) || !settings)
    return finish(s, item, 'failed', `channel ${item.channel} is disabled or not configured`);
  item.attempts++;
  // Per-attempt controller, aborted by its timeout or by stop() (no listeners piling up on a long-lived signal).
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), s.sendTimeoutMs);
  s.inFlight.add(ac);
  try {
    await o.channels.send(item.channel, item.alert, settings, { signal: ac.signal, log: o.log, deliveryId: item.id });
    return finish(s, item, 'delivered');
  } catch (err) {
    if (s.stopping.signal.aborted) return; // stays queued in the store, resent after restart
    const ce = err instanceof ChannelError ? err : undefined;
    if (!ce) o.log.error({ err, channel: item.channel }, 'alerting: channel bug');
    const message = ce?.message ?? 'internal error';
    if (!ce?.retryable || item.attempts >= s.maxAttempts) return finish(s, item, 'failed', message);
    // A claim that lapsed during the send: the item is another member's now; writing it back could resurrect it.
    if (keeper && !keeper.valid(keyOf(item), s.gens.get(item))) return abandon(s, item);
    const delay = ce.retryAfterMs ?? backoffMs(s, item.attempts);
    if (ce.retryAfterMs !== undefined) lane.pausedUntilMs = Math.max(lane.pausedUntilMs, s.now() + ce.retryAfterMs);
    item.nextAttemptMs = s.now() + delay;
    item.lastError = message;
    o.writes.write([{ type: 'put', bucket: QUEUE_BUCKET, key: item.id, value: item }]).catch(() => undefined);
    later(s, delay, () => makeReady(s, lane, item));
  } finally {
    clearTimeout(timer);
    s.inFlight.delete(ac);
  }
}
