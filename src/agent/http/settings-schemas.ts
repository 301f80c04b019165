/**
 * The settings routes' schemas, derived from the settings definitions (settings.ts, decision 163): each defined key
 * is one string property with the definition's description, its validator's schema (enum, maxLength, pattern,
 * example) and its default. Adding a setting is one definition; the request validation, the answers' serialisation
 * and the OpenAPI follow. The cross-field rules (Min ≤ Maj ≤ Cri, smtpEnabled → smtpServerName) stay in the settings
 * service. Secrets are never shown: the answers carry `<key>Set` ('true' or 'false') instead.
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { valueSchema, type SettingsService } from '../../core/settings/settings.service.js';
import { METRIC_GROUPS, type AgentSettings } from '../settings.js';

const TRUE_FALSE = ['true', 'false'];

/** A request body with any of the service's keys (every value a string); unknown keys → 400. */
function bodySchema(service: SettingsService, description?: string): TObject {
  const props: Record<string, TSchema> = {};
  for (const [k, d] of service.definitions())
    props[k] = Type.Optional(Type.String({ description: d.description, ...valueSchema(d), default: d.default }));
  return Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
}

/** What the API shows of the service's record: every key, a secret only as `<key>Set`. */
function viewProps(service: SettingsService): Record<string, TSchema> {
  const props: Record<string, TSchema> = {};
  for (const [k, d] of service.definitions()) {
    if (d.secret) props[`${k}Set`] = Type.String({ enum: TRUE_FALSE, description: `whether ${k} is stored` });
    else props[k] = Type.String({ description: d.description, ...valueSchema(d) });
  }
  return props;
}

export interface SettingsSchemas {
  /** POST /updateSetting. */
  settingsBody: TObject;
  /** POST /updateSetting's answer. */
  settingsAck: TObject;
  /** POST /setsmtp. */
  smtpBody: TObject;
  /** POST /setsmtp's answer. */
  smtpAck: TObject;
  /** GET /api/setting: the settings and the SMTP configuration without the password. */
  view: TObject;
}

export function settingsSchemas(settings: AgentSettings): SettingsSchemas {
  const ack = (field: string, props: Record<string, TSchema>) =>
    Type.Object({ code: Type.Integer(), message: Type.String(), [field]: Type.Object(props) });
  const settingsView = viewProps(settings.settings);
  const smtpView = viewProps(settings.smtp);
  return {
    settingsBody: bodySchema(
      settings.settings,
      `Metric groups: ${METRIC_GROUPS.join(', ')}; thresholds in the group's unit (docs/agent.md)`,
    ),
    settingsAck: ack('settings', settingsView),
    smtpBody: bodySchema(settings.smtp),
    smtpAck: ack('smtp', smtpView),
    view: Type.Object({ ...settingsView, ...smtpView }),
  };
}
