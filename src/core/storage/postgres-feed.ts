/**
 * The PostgreSQL store's change feed (docs/cluster.md "Change propagation"). A write to a watched bucket sends
 * `pg_notify('kv_<ns>', {o: origin, b: bucket, k?: base64 key})` in the write's own transaction, so it is delivered at
 * commit and only if the write committed. Every store object LISTENs on one dedicated connection (not a pool client);
 * it drops its own notifications (origin = a random id per store object) and calls each watcher in commit order, one
 * change at a time. A lost connection is reopened (backoff 0.1–5 s); after the gap every watcher is told to reload all
 * (key undefined), since notifications sent meanwhile are gone. Payloads stay under PostgreSQL's 8000-byte limit: a key
 * too long for one becomes a whole-bucket change.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { decodeKey } from './key-codec.js';
import type { ChangeWatcher, KvKey } from './kv-store.js';

const MAX_PAYLOAD_BYTES = 7900;
/** More changed keys than this in one bucket in one batch: one whole-bucket change instead. */
const MAX_KEYS_PER_BATCH = 64;

interface Payload {
  o: string;
  b: string;
  k?: string;
}

interface Subscription {
  watcher: ChangeWatcher;
  /** The previous call's completion: calls run one at a time, in order. */
  tail: Promise<void>;
}

export interface ChangeNotice {
  channel: string;
  payload: string;
}

export class PostgresFeed {
  readonly origin = randomUUID();
  readonly channel: string;
  private readonly subs = new Map<string, Set<Subscription>>();
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = 100;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    namespace: string,
    private readonly log?: Logger,
  ) {
    this.channel = `kv_${namespace}`;
  }

  /** Connects and LISTENs (the store's open awaits this, so a store sees every change committed after it opened). */
  async start(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url, keepAlive: true });
    c.on('notification', (n) => {
      if (n.channel === this.channel && n.payload) this.dispatch(n.payload);
    });
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    this.client = c;
  }

  /** True when this process announces writes to the bucket (it watches it). */
  announces(bucket: string): boolean {
    return this.subs.has(bucket);
  }

  watch(bucket: string, watcher: ChangeWatcher): () => void {
    let set = this.subs.get(bucket);
    if (!set) this.subs.set(bucket, (set = new Set()));
    const sub: Subscription = { watcher, tail: Promise.resolve() };
    set.add(sub);
    return () => {
      set.delete(sub);
      if (set.size === 0 && this.subs.get(bucket) === set) this.subs.delete(bucket);
    };
  }

  /** The notifications announcing writes to these (bucket, encoded key) pairs; undefined key = the whole bucket. */
  notices(changes: Array<{ bucket: string; key?: Buffer }>): ChangeNotice[] {
    const perBucket = new Map<string, Set<string> | 'all'>();
    for (const { bucket, key } of changes) {
      if (!this.announces(bucket)) continue;
      const cur = perBucket.get(bucket) ?? new Set<string>();
      if (cur === 'all') continue;
      if (key === undefined || cur.size >= MAX_KEYS_PER_BATCH) perBucket.set(bucket, 'all');
      else perBucket.set(bucket, cur.add(key.toString('base64')));
    }
    const out: ChangeNotice[] = [];
    for (const [b, keys] of perBucket) {
      if (keys === 'all') out.push(this.notice({ o: this.origin, b }));
      else for (const k of keys) out.push(this.notice({ o: this.origin, b, k }));
    }
    return out;
  }

  private notice(p: Payload): ChangeNotice {
    let payload = JSON.stringify(p);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) payload = JSON.stringify({ o: p.o, b: p.b });
    return { channel: this.channel, payload };
  }

  private dispatch(raw: string): void {
    let p: Payload;
    let key: KvKey | undefined;
    try {
      p = JSON.parse(raw) as Payload;
      if (p.o === this.origin) return;
      key = p.k === undefined ? undefined : decodeKey(Buffer.from(p.k, 'base64'));
    } catch (err) {
      this.log?.warn({ err }, 'unreadable store change notification ignored');
      return;
    }
    for (const sub of this.subs.get(p.b) ?? []) this.call(sub, p.b, key);
  }

  private call(sub: Subscription, bucket: string, key: KvKey | undefined): void {
    sub.tail = sub.tail
      .then(() => sub.watcher(key))
      .catch((err: unknown) => this.log?.error({ err, bucket }, 'store change watcher failed'));
  }

  private lost(c: pg.Client, err?: unknown): void {
    if (this.client !== c || this.closed) return;
    this.client = undefined;
    this.log?.warn({ err }, 'store change feed connection lost; reconnecting');
    void c.end().catch(() => undefined);
    this.reconnect();
  }

  private reconnect(): void {
    this.retryTimer = setTimeout(() => {
      this.start().then(
        () => {
          this.retryMs = 100;
          this.log?.info('store change feed reconnected; reloading every watched bucket');
          for (const [bucket, set] of this.subs) for (const sub of set) this.call(sub, bucket, undefined);
        },
        (err: unknown) => {
          this.retryMs = Math.min(this.retryMs * 2, 5000);
          this.log?.warn({ err, retryMs: this.retryMs }, 'store change feed reconnect failed');
          this.reconnect();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  /** Tests: drops the connection as a network failure would. */
  breakConnection(): void {
    const c = this.client;
    if (c) this.lost(c, new Error('connection broken on purpose'));
  }
}
