/**
 * Which queued alerts this cluster member may deliver (docs/cluster.md "Alerting"). A delivery lane key is
 * `<channel> <monitor>`: the member holding its claim (store.claims, on the store's clock) delivers every queued alert
 * of that monitor on that channel, oldest first, so a monitor's order within a channel holds cluster-wide (decision
 * 114). A claim is taken when the member queues an alert or finds unclaimed ones (sweep), renewed every sweep, and
 * released once the key's last alert here is finished and its removal from the queue is durable, so whoever claims
 * next reads only what is still to send. A dead member's claims expire after `ttlMs` and a live member's sweep takes
 * them: retries survive any member's death.
 *
 * Locally a claim is valid until (monotonic time the claim or renewal was sent) + ttl − margin, before the store lets
 * another member take it; each hold has a generation, so an item admitted under a claim that lapsed (a paused or
 * partitioned process) is never sent under a later one: it is read again from the store once the key is re-claimed.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Claims } from '../../core/storage/claims.js';

export interface DeliveryCluster {
  /** This member's id: the owner of its claims. */
  owner: string;
  /** A claim not renewed this long expires (the cluster's lease TTL). */
  ttlMs: number;
  /** Renew held claims and look for unclaimed queued alerts this often (the heartbeat). */
  sweepMs: number;
  mono?: () => number;
}

interface Hold {
  gen: number;
  validUntilMono: number;
  /** Items admitted under this hold and not yet finished. */
  count: number;
}

export class ClaimKeeper {
  private readonly held = new Map<string, Hold>();
  private readonly mono: () => number;
  private nextGen = 1;
  /** Claims, renewals and releases go to the store one at a time, in the order they were asked. */
  private io: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly claims: Claims,
    private readonly opts: DeliveryCluster,
    private readonly log: Logger,
  ) {
    this.mono = opts.mono ?? (() => performance.now());
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.io.then(fn);
    this.io = p.catch(() => undefined);
    return p;
  }

  private validity(sentMono: number): number {
    return sentMono + this.opts.ttlMs - Math.max(1000, this.opts.ttlMs / 5);
  }

  /** The generation of the valid hold on `key`, or undefined. */
  current(key: string): number | undefined {
    const h = this.held.get(key);
    return h && h.validUntilMono > this.mono() ? h.gen : undefined;
  }

  valid(key: string, gen: number | undefined): boolean {
    return gen !== undefined && this.current(key) === gen;
  }

  /** Claims the keys not held here; resolves the ones won with their new generation. */
  claim(keys: Iterable<string>): Promise<Map<string, number>> {
    return this.serial(async () => {
      const want = [...new Set(keys)].filter((k) => this.current(k) === undefined);
      const won = new Map<string, number>();
      if (want.length === 0) return won;
      const sent = this.mono();
      for (const k of await this.claims.claim(want, this.opts.owner, this.opts.ttlMs)) {
        const gen = this.nextGen++;
        this.held.set(k, { gen, validUntilMono: this.validity(sent), count: 0 });
        won.set(k, gen);
      }
      return won;
    });
  }

  /** An item admitted under hold `gen` of `key`. */
  add(key: string, gen: number): void {
    const h = this.held.get(key);
    if (h?.gen === gen) h.count++;
  }

  /** An item of hold `gen` finished (`durable`: its removal from the queue) or was given up: the last one releases. */
  done(key: string, gen: number | undefined, durable: Promise<unknown>): void {
    const h = this.held.get(key);
    if (!h || h.gen !== gen || --h.count > 0) return;
    void durable
      .catch(() => undefined)
      .then(() => {
        if (this.held.get(key) !== h || h.count > 0) return;
        this.held.delete(key);
        return this.serial(() => this.claims.release([key], this.opts.owner));
      })
      .catch((err: unknown) => this.log.warn({ err, key }, 'alerting: releasing a delivery claim failed'));
  }

  /** Renews the valid holds; a hold that lapsed or was lost is dropped (its items are given up, not sent). */
  renew(): Promise<void> {
    return this.serial(async () => {
      const now = this.mono();
      for (const [k, h] of this.held) if (h.validUntilMono <= now) this.held.delete(k);
      const keys = [...this.held.keys()];
      if (keys.length === 0) return;
      const sent = this.mono();
      const kept = new Set(await this.claims.claim(keys, this.opts.owner, this.opts.ttlMs));
      for (const k of keys) {
        const h = this.held.get(k);
        if (!h) continue;
        if (kept.has(k)) h.validUntilMono = this.validity(sent);
        else this.held.delete(k);
      }
      if (kept.size < keys.length) this.log.warn({ lost: keys.length - kept.size }, 'alerting: delivery claims lost');
    });
  }

  /** Gives every hold up (a clean stop). */
  releaseAll(): Promise<void> {
    const keys = [...this.held.keys()];
    this.held.clear();
    return this.serial(() => this.claims.release(keys, this.opts.owner));
  }
}
