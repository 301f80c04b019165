/**
 * A cluster's shared delivery queue (docs/cluster.md "Alerting"): a member delivers a monitor's alerts on a channel
 * only while it holds that lane key's claim (delivery-claims.ts), checked before every attempt. It claims the keys of
 * the alerts it queues and, every sweep, the unclaimed ones it finds (a dead member's, once expired), reading their
 * items from the store after the claim, oldest first.
 */
import { isStaleFence } from '../../core/storage/claims.js';
import { admit, schedule } from './delivery-lanes.js';
import { recountAndPrune } from './delivery-log.js';
import { type QueueState, keyOf } from './delivery-state.js';
import { QUEUE_BUCKET, type QueueItem } from './delivery-types.js';

/** Reads the queued items of freshly claimed keys from the store and admits them, oldest first. */
async function admitClaimed(s: QueueState, won: Map<string, number>): Promise<void> {
  if (won.size === 0) return;
  const keeper = s.keeper!;
  const items: QueueItem[] = [];
  for await (const e of s.o.store.bucket(QUEUE_BUCKET).range<QueueItem>())
    if (won.has(keyOf(e.value)) && !s.admitted.has(e.value.id)) items.push(e.value);
  items.sort((a, b) => a.createdMs - b.createdMs);
  for (const item of items) {
    const key = keyOf(item);
    const gen = won.get(key)!;
    if (!keeper.valid(key, gen)) continue;
    s.gens.set(item, gen);
    keeper.add(key, gen);
    s.admitted.set(item.id, item);
    admit(s, item);
  }
  // A key claimed with nothing left to send (delivered meanwhile) is released at once.
  for (const [key, gen] of won) {
    keeper.add(key, gen);
    keeper.done(key, gen, Promise.resolve());
  }
}

/** Renews held claims, then claims and admits the queued items no live member holds; keeps the shared log's cap. */
export async function sweep(s: QueueState): Promise<void> {
  const keeper = s.keeper!;
  await keeper.renew();
  await recountAndPrune(s).catch((err: unknown) => s.log.warn({ err }, 'alerting: pruning the delivery log failed'));
  const free = new Set<string>();
  for await (const e of s.o.store.bucket(QUEUE_BUCKET).range<QueueItem>())
    if (!s.admitted.has(e.value.id) && keeper.current(keyOf(e.value)) === undefined) free.add(keyOf(e.value));
  if (free.size) await admitClaimed(s, await keeper.claim(free));
}

/** Sweeps after `delayMs`, then every sweepMs until stop(). */
export function armSweep(s: QueueState, delayMs: number): void {
  if (s.stopping.signal.aborted) return;
  s.sweepTimer = setTimeout(() => {
    sweep(s)
      .catch((err: unknown) => s.log.warn({ err }, 'alerting: delivery sweep failed'))
      .finally(() => armSweep(s, s.o.cluster!.sweepMs));
  }, delayMs);
}

/** A queued item is sent here under the key's claim, held already or claimed once it is durable. */
export function admitLocal(s: QueueState, item: QueueItem, written: Promise<void>): void {
  const keeper = s.keeper!;
  const key = keyOf(item);
  const gen = keeper.current(key);
  if (gen !== undefined) {
    s.gens.set(item, gen);
    keeper.add(key, gen);
    s.admitted.set(item.id, item);
    s.outstanding++;
    schedule(s, item);
    return;
  }
  void written
    .then(() => keeper.claim([key]))
    .then((won) => admitClaimed(s, won))
    .catch((err: unknown) => {
      if (!isStaleFence(err)) s.log.warn({ err }, 'alerting: claiming a delivery failed (a sweep retries)');
    })
    .finally(() => {
      if (!s.admitted.has(item.id)) s.durable.delete(item.id);
    });
}
