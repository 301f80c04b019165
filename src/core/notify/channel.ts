/**
 * A notification channel: one file per channel in ./channels/, one line in ./registry.ts.
 * `buildRequest`-style pure functions live in the channel file and are tested alone (payload shape per vendor).
 */
import type { TObject } from '@sinclair/typebox';
import type { Logger } from 'pino';

export interface Alert {
  /** 'problem' when a monitor turned (or escalated) non-OK, 'recovery' when it returned to OK, 'test' for a test send. */
  kind: 'problem' | 'recovery' | 'test';
  monitor: { name: string; type: string; displayName?: string; probe?: string; location?: string; tags?: string[] };
  status: string;
  previousStatus?: string;
  message?: string;
  responseTimeMs?: number;
  timestampMs: number;
  /** Extra per-alert recipients (emailR for email). */
  recipients?: string[];
}

export interface SendContext {
  signal: AbortSignal;
  log: Logger;
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

export interface NotificationChannel<S = Record<string, string>> {
  readonly id: string;
  /** Settings schema (string-valued as the spec's bodies). */
  readonly settings: TObject;
  /** Settings keys that are secrets (webhook URLs, routing keys, passwords). */
  readonly secretFields: readonly string[];
  /** Throws ChannelError (retryable or not) on failure. */
  send(alert: Alert, settings: S, ctx: SendContext): Promise<void>;
  /** Optional connectivity test without sending an alert. */
  probe?(settings: S, ctx: SendContext): Promise<{ ok: boolean; latencyMs: number; message?: string }>;
}
