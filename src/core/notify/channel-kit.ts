/**
 * What every channel file shares beyond the NotificationChannel contract: the settings checks the alerting service
 * runs before storing settings, and the dependencies a channel factory takes (a TLS agent for tests, a timeout).
 */
import type https from 'node:https';
import { Type } from '@sinclair/typebox';
import type { NotificationChannel } from './channel.js';

export const DEFAULT_SEND_TIMEOUT_MS = 10_000;

/** 'true' | 'false' as the spec writes booleans. */
export const BoolString = Type.Union([Type.Literal('true'), Type.Literal('false')]);

export interface ChannelDefinition<S = Record<string, string>> extends NotificationChannel<S> {
  /** Settings that must be non-empty when `enabled` is 'true'. */
  readonly requiredWhenEnabled: readonly string[];
  /** Defaults filled in when a setting is absent (never secrets). */
  readonly defaults?: Readonly<Record<string, string>>;
  /** Cross-field / format checks beyond the schema; returns the offending field and a message. */
  validate?(settings: S): { field: string; message: string } | undefined;
  /** Releases pooled connections (email transports). */
  close?(): Promise<void>;
}

export interface WebhookChannelDeps {
  /** HTTPS agent: keep-alive, and in tests a CA for the local receivers. */
  agent?: https.Agent;
  timeoutMs?: number;
}

export type AnyChannel = ChannelDefinition<any>;
