/**
 * What every channel file shares beyond the NotificationChannel contract: the settings checks the alerting service
 * runs before storing settings, and the dependencies a channel factory takes (a TLS agent for tests, a timeout).
 */
import type https from 'node:https';
import { Type } from '@sinclair/typebox';
import type { Alert, NotificationChannel, SendContext } from './channel.js';
import { assertOk, invalidHttpsUrl, postJson } from './http-post.js';

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

export interface WebhookSettings {
  enabled?: string;
  webhookUrl?: string;
}

/**
 * A channel that POSTs one JSON body to a secret incoming-webhook URL (Slack, Microsoft Teams): the settings schema,
 * the https-only URL check and the send with its timeout are the same; each vendor supplies its payload builder.
 */
export function createWebhookChannel(
  id: string,
  opts: { urlDescription: string; maxUrlLength: number; build(alert: Alert): unknown },
  deps: WebhookChannelDeps = {},
): ChannelDefinition<WebhookSettings> {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  return {
    id,
    settings: Type.Object(
      {
        enabled: Type.Optional(BoolString),
        webhookUrl: Type.Optional(Type.String({ maxLength: opts.maxUrlLength, description: opts.urlDescription })),
      },
      { additionalProperties: false },
    ),
    secretFields: ['webhookUrl'],
    requiredWhenEnabled: ['webhookUrl'],
    validate(s) {
      if (s.webhookUrl !== undefined && s.webhookUrl !== '') {
        const bad = invalidHttpsUrl(s.webhookUrl);
        if (bad) return { field: 'webhookUrl', message: `webhookUrl ${bad}` };
      }
      return undefined;
    },
    async send(alert: Alert, s: WebhookSettings, ctx: SendContext): Promise<void> {
      const res = await postJson(s.webhookUrl ?? '', opts.build(alert), id, {
        timeoutMs,
        signal: ctx.signal,
        agent: deps.agent,
      });
      assertOk(res, id, Date.now());
    },
  };
}
