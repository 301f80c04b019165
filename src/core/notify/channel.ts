/**
 * The notification-channel contract. A channel is one file in ./channels/ (a `defineChannel({...})` declaration, see
 * channel-kit.ts) and one line in ./registry.ts. The declaration is data plus pure functions: settings schema (secret
 * fields marked), per-monitor fields and routing, severity mapping, a pure payload builder, delivery, optional probe.
 * Everything else (alert targets, per-monitor field validation, the /alerting routes' schemas, settings redaction,
 * OpenAPI, the dashboard's forms) is derived from the registry.
 */
import type https from 'node:https';
import type { TObject, TSchema } from '@sinclair/typebox';
import type { Logger } from 'pino';

/**
 * 'problem' when a monitor turned (or escalated) non-OK, 'recovery' when it returned to OK, 'test' for a test send,
 * 'acknowledge' when a user acknowledged an open problem (only to channels whose `kinds` include it).
 */
export type AlertKind = 'problem' | 'recovery' | 'test' | 'acknowledge';

export interface Acknowledgement {
  /** User name of who acknowledged. */
  by: string;
  atMs: number;
  note?: string;
}

export interface Alert {
  kind: AlertKind;
  monitor: { name: string; type: string; displayName?: string; probe?: string; location?: string; tags?: string[] };
  status: string;
  previousStatus?: string;
  message?: string;
  responseTimeMs?: number;
  timestampMs: number;
  /** Extra per-alert recipients (emailR for email). */
  recipients?: string[];
  /** Set on kind 'acknowledge'. */
  acknowledgement?: Acknowledgement;
  /** What the discovery agent of the target's host found (one line, docs/alerting.md "Enrichment"); also the first
   * line of `message`, so every channel shows it. */
  diagnosis?: string;
}

/** Decrypted, string-valued settings with defaults applied. */
export type ChannelSettingsValues = Record<string, string>;

/** What the registry gives every channel call: the network of the service and a place for pooled resources. */
export interface ChannelNet {
  /** HTTPS agent: keep-alive, and in tests a CA trusting the local receivers. */
  agent?: https.Agent;
  /** Hard deadline of one HTTP request / SMTP step. */
  timeoutMs: number;
  /** Extra TLS options for SMTP connections (a test CA). */
  smtpTls?: { ca?: string | Buffer; rejectUnauthorized?: boolean };
}

/** Long-lived resources of one registry (e.g. a pooled SMTP transport), closed with it. */
export interface ChannelPool {
  /** The value in `slot`, made by `create` when absent or when `key` changed (the old one is closed first). */
  slot<T>(slot: string, key: string, create: () => T, close: (value: T) => void): T;
  /** Closes and forgets the value in `slot`. */
  drop(slot: string): void;
}

export interface SendContext {
  signal: AbortSignal;
  log: Logger;
  /**
   * The queued delivery's id: the same on every attempt of one alert to one channel, after a restart and when another
   * instance takes it over (absent for channel tests). A channel whose receiver deduplicates passes it on (webhook:
   * the Idempotency-Key header), so the at-least-once resend of a send whose outcome was lost can be recognised.
   */
  deliveryId?: string;
  net: ChannelNet;
  pool: ChannelPool;
}

export class ChannelError extends Error {
  /** true: try again later (network error, 429, 5xx). */
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  constructor(message: string, retryable: boolean, retryAfterMs?: number) {
    super(message);
    this.retryable = retryable;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface ProbeResult {
  ok: boolean;
  latencyMs: number;
  message?: string;
}

/** A monitor's stored fields as alerting reads them (string values). */
export type MonitorFieldsView = Readonly<Record<string, string | undefined>>;

/** Whether a monitor alerts through a channel, and with what extra data (email recipients). */
export interface ChannelRoute {
  recipients?: string[];
}

/** The keys of every severity map: the non-OK statuses, OK (recovery) and TEST (a test send). */
export const SEVERITY_KEYS = ['MINOR', 'MAJOR', 'CRITICAL', 'DOWN', 'ERROR', 'EXCEPTION', 'OK', 'TEST'] as const;
export type SeverityKey = (typeof SEVERITY_KEYS)[number];
export type SeverityMap = Readonly<Record<SeverityKey, string>>;

/** Where a channel delivers: the setting holding its URL (overridable, tests point it at a local receiver), or SMTP. */
export type ChannelEndpoint = { kind: 'https'; setting: string } | { kind: 'smtp'; host: string; port: string };

export interface ChannelDefinition {
  /** Lower-case letters and digits; the path word in /alerting/channels/{id} and in `notifyChannels`. */
  readonly id: string;
  readonly displayName: string;
  /** One line: what it talks to and how. */
  readonly description: string;
  /** The vendor's documentation of the API used. */
  readonly docsUrl: string;
  /** Settings schema, string fields; secret ones carry `x-secret: true` (see `Secret()` in channel-kit.ts). */
  readonly settings: TObject;
  /** Derived from the schema: the settings that are secrets (sealed at rest, shown as set/unset). */
  readonly secretFields: readonly string[];
  /** Settings that must be non-empty to enable the channel. */
  readonly requiredWhenEnabled: readonly string[];
  /** Defaults filled in when a setting is absent (never secrets). */
  readonly defaults: Readonly<ChannelSettingsValues>;
  /** Example settings (docs, form placeholders, the registry meta-test). */
  readonly example: Readonly<ChannelSettingsValues>;
  readonly endpoint: ChannelEndpoint;
  /** Set when the settings are not stored by /alerting/channels but by another endpoint (email: /setsmtpvault). */
  readonly external?: { via: string; enabledField: string };
  /** Per-monitor fields this channel adds to every monitor (opt-outs); schemas accept strings. */
  readonly monitorFields: Readonly<Record<string, TSchema>>;
  /** Whether a monitor alerts through this channel (after `notifyChannels` routing); undefined = not. */
  route(monitor: MonitorFieldsView): ChannelRoute | undefined;
  /** Our status → the vendor's severity word / priority / colour (documented; used by the payload builder). */
  readonly severity: SeverityMap;
  /** Alert kinds delivered; 'acknowledge' only where the vendor has a use for it. */
  readonly kinds: readonly AlertKind[];
  /** Cross-field / format checks beyond the schema; returns the offending field and a message. */
  validate?(settings: ChannelSettingsValues): { field: string; message: string } | undefined;
  /** Throws ChannelError (retryable or not) on failure. */
  send(alert: Alert, settings: ChannelSettingsValues, ctx: SendContext): Promise<void>;
  /** Checks the settings against the service without sending a message (credentials, reachability). */
  probe?(settings: ChannelSettingsValues, ctx: SendContext): Promise<ProbeResult>;
  /** What `probe` does, in one line (shown next to the check button). */
  readonly probeDescription?: string;
}
