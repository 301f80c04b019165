/**
 * The alerting service's public types: the service interface the run service and routes call, its dependencies, an
 * open problem as the API shows it, a channel test's result, and the alert state bucket. alerting.service.ts
 * re-exports them.
 */
import type { Logger } from 'pino';
import type { ChannelRegistry } from '../../core/notify/registry.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import type { AlertCluster } from './alert-shards.js';
import type { ChannelSettings, Settings } from './channel-settings.js';
import type { DeliveryQueueOptions, DeliveryRecord } from './delivery-queue.js';
import type { Maintenance } from './maintenance.js';

export const STATE_BUCKET = 'alert_state';

/** Monitor fields alerting reads (string-valued as stored). */
export type AlertMonitor = Record<string, string | undefined> & { name: string; type?: string };

export interface AlertingServiceDeps {
  store: KvStore;
  log: Logger;
  secrets: SecretBox;
  /** Settings of the channels declared `external`, by id: email → the decrypted SMTP settings of /setsmtpvault. */
  external?: Readonly<Record<string, () => Settings | undefined>>;
  /** Defaults to the real channels; tests pass one with a TLS agent trusting their receivers. */
  channels?: ChannelRegistry;
  /** A monitor's stored fields (for acknowledgements); undefined when it does not exist. */
  getMonitor?: (name: string) => AlertMonitor | undefined;
  now?: () => number;
  /** Set in a cluster: alert state and deliveries are shared through the store (see the file comment). */
  cluster?: AlertCluster;
  queue?: Pick<
    DeliveryQueueOptions,
    'concurrency' | 'maxAttempts' | 'baseBackoffMs' | 'maxBackoffMs' | 'sendTimeoutMs' | 'deliveryLogMax'
  >;
}

export interface TestResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
  /** What a probe found (mode 'probe'). */
  message?: string;
}

/** An open problem as the API shows it. */
export interface ProblemView {
  monitor: string;
  /** Status of the open problem (the last one alerted or followed). */
  status: string;
  lastStatus?: string;
  openedMs?: number;
  lastAlertMs?: number;
  acknowledged?: { by: string; atMs: number; note?: string; status: string };
}

export interface AlertingService {
  start(): Promise<void>;
  stop(): Promise<void>;
  statusFor(monitor: AlertMonitor, computed: string, nowMs: number): string;
  /** `result.suppressedBy`: a failing parent (docs/alerting.md "Dependencies"): a problem alert is not sent and the
   * problem is not opened, so it alerts once the parent recovers if the monitor still fails; recoveries always go. */
  onResult(
    monitor: AlertMonitor,
    status: string,
    result?: {
      message?: string;
      responseTimeMs?: number;
      suppressedBy?: string;
      /** The enrichment's one-line summary (settles within ENRICH_WAIT_MS): a problem alert waits for it, and later
       * alerts and state writes of the monitor queue behind (order kept). */
      diagnosis?: Promise<string | undefined>;
    },
  ): void;
  /** Drops a deleted monitor's alert state. */
  forget(name: string): void;
  readonly maintenance: Maintenance;
  readonly channels: ChannelRegistry;
  readonly channelSettings: ChannelSettings;
  /** Sends a test message ('send', default) or runs the channel's probe ('probe'). */
  testChannel(id: string, opts?: { to?: string; mode?: 'send' | 'probe' }): Promise<TestResult>;
  /** Open problems, oldest first; `monitor` filters to one. */
  problems(monitor?: string): Promise<ProblemView[]>;
  /** Acknowledges a monitor's open problem; 404 unknown monitor, 409 no open problem. */
  acknowledge(name: string, ack: { by: string; note?: string }): Promise<ProblemView>;
  /** Removes the acknowledgement (re-notify resumes); 404 unknown monitor, 409 not acknowledged. */
  unacknowledge(name: string): Promise<ProblemView>;
  deliveries(limit?: number): Promise<DeliveryRecord[]>;
  /** Test/bench helper: resolves when no alert is queued or in flight. */
  idle(): Promise<void>;
  pending(): Record<string, number>;
  /** Delivered / failed alert counts since start(). */
  outcomes(): { delivered: number; failed: number };
}
