/**
 * The /alerting routes' schemas derived from the channel registry: each channel's settings as GET shows them (secrets
 * as set / unset), each channel's settings patch (the POST body, documented per channel), the channel catalog the
 * dashboard builds its forms from, and a TypeBox validator compiler for routes whose documented body (a union per
 * channel) is wider than what Fastify should check before the service does (the channel named in the path).
 */
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';
import { AppError } from '../../core/errors.js';
import type { ChannelDefinition } from '../../core/notify/channel.js';
import { isSecret } from '../../core/notify/channel-kit.js';

const SetUnset = (description?: string) =>
  Type.Union([Type.Literal('set'), Type.Literal('unset')], {
    description: `secret: set or unset${description ? ` — ${description}` : ''}`,
  });

const describe = (s: TSchema): string | undefined => (s as { description?: string }).description;

/** A channel's settings as GET /alerting/channels shows them. */
export function maskedSettingsSchema(c: ChannelDefinition): TObject {
  const props: Record<string, TSchema> = {};
  for (const [k, s] of Object.entries(c.settings.properties))
    props[k] = Type.Optional(isSecret(s) ? SetUnset(describe(s)) : Type.String({ description: describe(s) }));
  if (c.external) props.configuredVia = Type.Optional(Type.String({ description: 'where these settings are changed' }));
  return Type.Object(props, { additionalProperties: false, title: c.id, description: c.description });
}

/** A channel's settings patch (POST /alerting/channels/{id}), for the OpenAPI document. */
export function settingsPatchSchema(c: ChannelDefinition): TObject {
  const props: Record<string, TSchema> = {};
  for (const [k, s] of Object.entries(c.settings.properties)) {
    const { 'x-secret': secret, ...rest } = s as TSchema & { 'x-secret'?: boolean };
    props[k] = Type.Optional(
      secret ? { ...rest, description: `${describe(s) ?? k}; "set" keeps the stored value, "" clears it` } : rest,
    );
  }
  return Type.Object(props, { additionalProperties: false, title: c.id, description: c.description });
}

/** One channel as the dashboard and integrators see it: enough to build its settings form and monitor fields. */
export const CatalogEntry = Type.Object({
  id: Type.String(),
  displayName: Type.String(),
  description: Type.String(),
  docsUrl: Type.String(),
  settings: Type.Object(
    {},
    { additionalProperties: true, description: 'JSON schema of the settings (x-secret marks)' },
  ),
  secretFields: Type.Array(Type.String()),
  requiredWhenEnabled: Type.Array(Type.String()),
  defaults: Type.Record(Type.String(), Type.String()),
  example: Type.Record(Type.String(), Type.String()),
  configuredVia: Type.Optional(Type.String()),
  monitorFields: Type.Object({}, { additionalProperties: true, description: 'per-monitor fields: name → JSON schema' }),
  severity: Type.Record(Type.String(), Type.String(), {
    description: "status (and OK = recovery, TEST) → the vendor's severity, priority or colour",
  }),
  kinds: Type.Array(Type.String(), { description: 'alert kinds delivered (acknowledge: acknowledgements too)' }),
  probe: Type.Boolean({
    description: 'POST /alerting/channels/{id}/test with {"mode":"probe"} checks without sending',
  }),
  probeDescription: Type.Optional(Type.String()),
});

export function catalogEntry(c: ChannelDefinition): Record<string, unknown> {
  const strip = (s: TSchema): unknown => JSON.parse(JSON.stringify(s)) as unknown;
  return {
    id: c.id,
    displayName: c.displayName,
    description: c.description,
    docsUrl: c.docsUrl,
    settings: strip(c.settings),
    secretFields: [...c.secretFields],
    requiredWhenEnabled: [...c.requiredWhenEnabled],
    defaults: { ...c.defaults },
    example: Object.fromEntries(Object.entries(c.example).filter(([k]) => !c.secretFields.includes(k))),
    ...(c.external ? { configuredVia: c.external.via } : {}),
    monitorFields: Object.fromEntries(Object.entries(c.monitorFields).map(([k, s]) => [k, strip(s)])),
    severity: { ...c.severity },
    kinds: [...c.kinds],
    probe: typeof c.probe === 'function',
    ...(c.probeDescription ? { probeDescription: c.probeDescription } : {}),
  };
}

/**
 * A validator compiler checking each request part with TypeBox; `body` replaces the documented body schema for the
 * check (`undefined` accepted when `optionalBody`). Errors are 400s naming the field, like every other route.
 */
export function typeboxValidator(opts: {
  body?: TSchema;
  optionalBody?: boolean;
}): FastifySchemaCompiler<FastifySchema> {
  return ({ schema, httpPart }) => {
    const isBody = httpPart === 'body';
    const check = TypeCompiler.Compile(isBody && opts.body ? opts.body : (schema as TSchema));
    return (data: unknown) => {
      if (isBody && (data === undefined || data === null) && opts.optionalBody) return { value: undefined };
      if (check.Check(data)) return { value: data };
      const e = check.Errors(data).First();
      const path = (e?.path ?? '').replace(/^\//, '').replace(/\//g, '.');
      const field = [httpPart ?? 'body', path].filter(Boolean).join('.');
      return { error: AppError.badRequest(`${field} ${e?.message ?? 'is invalid'}`, field) };
    };
  };
}
