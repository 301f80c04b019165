/**
 * The delivery queue's public types: a queued item, a delivery log record, the queue's options and interface, and
 * the buckets they live in. delivery-queue.ts re-exports them.
 */
import type { Logger } from 'pino';
import type { Alert } from '../../core/notify/channel.js';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import type { BatchOp, KvStore } from '../../core/storage/kv-store.js';
import type { Fence } from '../../core/storage/claims.js';
import type { WriteBuffer } from './write-buffer.js';
import type { DeliveryCluster } from './delivery-claims.js';

export const QUEUE_BUCKET = 'alert_queue';
export const DELIVERY_BUCKET = 'alert_deliveries';

export interface QueueItem {
  id: string;
  channel: string;
  alert: Alert;
  attempts: number;
  nextAttemptMs: number;
  createdMs: number;
  lastError?: string;
}

export interface DeliveryRecord {
  id: string;
  channel: string;
  kind: Alert['kind'];
  monitor: string;
  status: string;
  outcome: 'delivered' | 'failed';
  attempts: number;
  error?: string;
  createdMs: number;
  finishedMs: number;
}

export interface DeliveryQueueOptions {
  store: KvStore;
  writes: WriteBuffer;
  log: Logger;
  channels: ChannelRegistry;
  /** Decrypted settings of an enabled channel, undefined when it is disabled or not configured. */
  getSettings(channel: string): Record<string, string> | undefined;
  now?: () => number;
  /** Concurrent sends per channel (default 16), or per channel id. */
  concurrency?: number | Record<string, number>;
  maxAttempts?: number;
  baseBackoffMs?: number;
  maxBackoffMs?: number;
  sendTimeoutMs?: number;
  /** Delivery log size (default 1000). */
  deliveryLogMax?: number;
  /** Set in a cluster: the queue is shared through claims (see the file comment). */
  cluster?: DeliveryCluster;
}

export interface DeliveryQueue {
  start(): Promise<void>;
  stop(): Promise<void>;
  enqueue(channel: string, alert: Alert): Promise<void>;
  /** Queues several items with extra store operations in the same atomic batch (alert state), under `fence` when
   * given (a cluster's shard lease: refused, nothing is sent). Never awaits the network. */
  enqueueWith(items: Array<{ channel: string; alert: Alert }>, extraOps: BatchOp[], fence?: Fence): Promise<void>;
  deliveries(limit?: number): Promise<DeliveryRecord[]>;
  pending(): Record<string, number>;
  /** Final outcomes since start(). */
  outcomes(): { delivered: number; failed: number };
  /** Resolves when nothing is queued, waiting or in flight (tests, benches). */
  idle(): Promise<void>;
}
